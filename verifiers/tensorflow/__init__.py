"""TensorFlow verifiers. GPU ones run on CPU in CI (tensorflow-cpu) to prove they work; their
evidence counts for the GPU records only when measured on a GPU."""
