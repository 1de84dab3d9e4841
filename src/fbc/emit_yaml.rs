//! PLACEHOLDER: emits JSON text (valid YAML) until the go-yaml v2 compatible emitter lands.
use super::node::Node;
pub fn write_yaml(n: &Node, out: &mut String) {
    out.push_str(&n.to_json());
    out.push('\n');
}
