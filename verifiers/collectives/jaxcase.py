"""One JAX launch: psum, psum_scatter and all_to_all under shard_map over every local device.

    python -m verifiers.collectives.jaxcase RESULT.jsonl REPS

Run by verifiers/collectives/launch.py in a fresh process per launch, with the setting's
XLA_FLAGS / NCCL variables already in its environment (XLA reads its flags when the backend
starts). One process drives all devices; on a GPU machine XLA runs these collectives through
NCCL. Inputs are mixed-magnitude values that differ per device; each case writes one JSON line
with the SHA-256 of the gathered output per call.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time

from verifiers.collectives.table import JAX_OPS, JAX_SIZES


def _shard_map():
    import jax

    if hasattr(jax, "shard_map"):
        return jax.shard_map
    from jax.experimental.shard_map import shard_map

    return shard_map


def main(argv: list[str]) -> int:
    out_path, reps = argv[0], int(argv[1])
    started = time.perf_counter()
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devices = jax.devices()
    mesh = Mesh(np.array(devices), ("x",))
    n_dev = len(devices)
    shard_map = _shard_map()
    log = open(out_path, "a", encoding="utf-8")

    def write(entry: dict) -> None:
        log.write(json.dumps(entry) + "\n")
        log.flush()

    write({"event": "init", "jax": jax.__version__, "platform": devices[0].platform, "devices": n_dev,
           "init_s": round(time.perf_counter() - started, 3)})
    bodies = {
        "psum": lambda a: jax.lax.psum(a, "x"),
        "psum_scatter": lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True),
        "all_to_all": lambda a: jax.lax.all_to_all(a, "x", 1, 1, tiled=True),
    }
    for dtype_name in ("float32", "bfloat16"):
        dtype = getattr(jnp, dtype_name)
        for size in JAX_SIZES:
            rng = np.random.default_rng(size)
            host = rng.standard_normal((n_dev, size), dtype=np.float32) * 10.0 ** rng.integers(0, 5, (n_dev, size))
            x = jax.device_put(jnp.asarray(host, dtype=dtype), NamedSharding(mesh, P("x")))
            for op in JAX_OPS:
                cid = f"{op}:{dtype_name}:{size}"
                try:
                    fn = jax.jit(shard_map(bodies[op], mesh=mesh, in_specs=P("x"), out_specs=P("x")))
                    prints, times = [], []
                    for _ in range(reps):
                        begin = time.perf_counter()
                        y = fn(x).block_until_ready()
                        times.append(time.perf_counter() - begin)
                        data = np.asarray(jax.device_get(y))
                        prints.append(hashlib.sha256(data.tobytes()).hexdigest()[:32])
                    sample = [float(v) for v in np.asarray(data, dtype=np.float32).reshape(-1)[:1024]]
                    write({"case": cid, "rank": 0, "prints": prints, "times": [round(t, 7) for t in times[1:]],
                           "sample": sample})
                except Exception as exc:
                    write({"case": cid, "rank": 0, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:600]})
    write({"event": "done", "rank": 0})
    log.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
