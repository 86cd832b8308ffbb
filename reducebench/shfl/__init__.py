"""The warp-shuffle lab behind `reducebench shfl`: model (no GPU), device, and cli."""

from reducebench.shfl.model import (EXPLAIN_TOPICS, LAB_DTYPES, OPS, OWN, READ, SKIPPED,
                                    STATUSES, UNDEFINED, WARP_SIZE, WIDTHS, LaneOutcome,
                                    ShflCall, WarpOutcome, convert_value, explain, iota,
                                    outcome_dict, parse_mask, parse_values, same_value,
                                    simulate, source_lane)

__all__ = ["EXPLAIN_TOPICS", "LAB_DTYPES", "OPS", "OWN", "READ", "SKIPPED", "STATUSES",
           "UNDEFINED", "WARP_SIZE", "WIDTHS", "LaneOutcome", "ShflCall", "WarpOutcome",
           "convert_value", "explain", "iota", "outcome_dict", "parse_mask", "parse_values",
           "same_value", "simulate", "source_lane"]
