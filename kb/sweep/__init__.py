"""CPU sweeps of TensorFlow and Keras ops (`python -m kb.sweep`, `kb verify --sweep`)."""
