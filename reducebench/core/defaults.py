"""What a measurement does when nothing is said: the one place of every default that the
command line's options, RunSettings, StopRule and reducebench.measure (api.py) read.
`reducebench run` with no options measures every rung at 2^24 float32 elements, 256
threads a block, exact inputs, the L2 flushed before each sample."""

SIZE = 2**24
DTYPE = "float32"
RUNG = "all"
BLOCK = 256
INPUTS = "exact"          # integer inputs whose every partial sum is exact (verify/inputs.py)
COLD = True               # flush L2 (by reading) before every sample
TIMING = "single"         # one whole reduction a sample (graph: K runs from a CUDA graph)
DEVICE = 0

# the stop rule (core/stats.StopRule): sample until the noise (stdev / mean) is under
# MAX_NOISE_PCT after MIN_SAMPLES, or MAX_TIME_S seconds (or MAX_SAMPLES) went in
MIN_SAMPLES = 10
MAX_NOISE_PCT = 0.5
MAX_TIME_S = 0.5
MAX_SAMPLES = 2000

# The fewest rounds a side at which the round-level test of `compare` (an exact rank test
# at alpha 0.01: at best p = 2/252 with 5 a side, 2/70 with 4) can call a change at all.
ROUNDS = 5

# `compare`: a change within this percentage (or the rows' noise, where larger) is SAME
THRESHOLD_PCT = 2.0

# `check` and `sanitize`: an awkward size (a prime, no power of two near it) and a fixed
# seed, so that a failure is found again on the next try
CHECK_SIZE = 1000003
CHECK_SEED = 1234
