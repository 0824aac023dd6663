"""A module whose only module-level calls register its classes in a table (kb/scan/survey.py, declares_only):
google-research/pix2seq's tasks (forty-fourth corpus, 15 false alarms) are `@task_lib.TaskRegistry.register(...)`
classes, and run.py imports five of the eight task modules. The other three register nothing, since nothing
imports them: they are no scripts that `python tasks/x.py` runs, and their code never runs (RULES R4)."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files

_TASK = """\
    import tensorflow as tf
    from tasks import registry
    @registry.TaskRegistry.register("{name}")
    class Task:
        def preprocess(self, image):
            return tf.image.resize(image, (64, 64), method="nearest")
    """


def test_a_registered_module_nothing_imports_never_runs(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"run.py": """\
        import tensorflow as tf
        from tasks import detection
        from tasks import registry
        if __name__ == "__main__":
            task = registry.TaskRegistry.lookup("detection")()
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(task.preprocess(tf.Variable(tf.ones((1, 8, 8, 3)))))
            tape.gradient(loss, [])
        """, "tasks/registry.py": """\
        class TaskRegistry:
            table = {}
            @classmethod
            def register(cls, name):
                def add(task):
                    cls.table[name] = task
                    return task
                return add
            @classmethod
            def lookup(cls, name):
                return cls.table[name]
        """, "tasks/detection.py": _TASK.format(name="detection"), "tasks/panoptic.py": _TASK.format(name="panoptic")},
        "tensorflow=2.20")
    resized = sorted(Path(f.path).name for f in found if f.record == "tf.resize-nearest-backprop")
    assert resized == ["detection.py"], found
