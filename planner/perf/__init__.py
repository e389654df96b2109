"""Speed: the model of training throughput vs the GTX 1080 Ti, sweep time, memory fit and calibration."""
