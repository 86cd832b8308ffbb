"""A sum sharded across the GPUs of a host, and NCCL's collectives, device-free."""
