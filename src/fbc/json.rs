//! JSON streams to positioned [`super::node::Node`] trees (placeholder, being written).
