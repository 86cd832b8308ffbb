"""Running cases, device-free: settings, the runner, sampling policy, throttle, graph timing, energy, the read ceiling, counters, interruption, one process per device, and the host executor."""
