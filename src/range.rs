//! blang/semver v4 ranges (placeholder, being written).
