"""A script's subclass of an installable package's class whose methods the package calls (kb/scan/unreached.py):
jfkirk/tensorrec's `examples/keras_example.py` (forty-fifth corpus, 4 risky entries read as code nothing calls)
overrides `create_layers`, which the package's `AbstractKerasRepresentationGraph` calls as `self.create_layers(...)`.
An override the package's class never calls stays a note."""

from __future__ import annotations

from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan
from scan_files import scan_files


def test_a_hook_the_package_base_calls(tmp_path: Path) -> None:
    scan_files(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='recs', packages=['recs'])\n",
                          "recs/__init__.py": "", "recs/graphs.py": """\
        class AbstractKerasGraph:
            def connect(self, features, n_features, n_components):
                layers = self.create_layers(n_features=n_features, n_components=n_components)
                for layer in layers:
                    features = layer(features)
                return features
        """, "examples/keras_example.py": """\
        import keras as ks
        from recs.graphs import AbstractKerasGraph
        class DeepGraph(AbstractKerasGraph):
            def create_layers(self, n_features, n_components):
                return [ks.layers.Dense(n_components * 4, activation="relu"), ks.layers.Dense(n_components)]
            def unused_layers(self, n_components):
                return [ks.layers.Dense(n_components)]
        if __name__ == "__main__":
            graph = DeepGraph()
            model = ks.Sequential(graph.connect(ks.Input((8,)), 8, 4))
            model.fit([[0.0] * 8], [[0.0] * 4])
        """}, "tensorflow=2.20")
    result = scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20"))
    live = sorted(f.line for f in result.findings if f.record == "keras.unseeded-random")
    notes = sorted(f.line for f in result.notes if f.record == "keras.unseeded-random")
    assert live == [5, 5] and notes == [7], (live, notes)
