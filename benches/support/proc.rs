//! Reading a process's memory figures from `/proc`.

/// A `kB` field of `/proc/PROCESS/status` (`VmRSS:`, `VmHWM:`), for a pid or `self`; 0 when
/// it cannot be read.
pub fn status_kb(process: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{process}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
