//! `rdma -j statistic show`: `[{"ifindex":0,"ifname":"mlx5_0","port":1,"rx_write_requests":0,...}]`.
//! Every numeric field of a port object other than its address is a counter.

use super::rdma_sample;
use crate::metrics::Parsed;
use serde_json::Value;

/// Fields that say which port an object is, not what it counted.
const ADDRESS: &[&str] = &["ifindex", "ifname", "port"];

/// `None` when the text is not JSON, so that the caller reads it as text instead.
pub fn parse(text: &str, node: &str) -> Option<Parsed> {
    let v: Value = serde_json::from_str(text).ok()?;
    let items = match v {
        Value::Array(a) => a,
        o @ Value::Object(_) => vec![o],
        _ => return None,
    };
    let mut p = Parsed::default();
    for item in &items {
        let Some(obj) = item.as_object() else {
            p.unknown(&item.to_string());
            continue;
        };
        let dev = obj.get("ifname").and_then(Value::as_str);
        let port = obj.get("port").and_then(|v| match v {
            Value::Number(n) => Some(n.to_string()),
            Value::String(s) => Some(s.clone()),
            _ => None,
        });
        let (Some(dev), Some(port)) = (dev, port) else {
            p.unknown(&item.to_string());
            continue;
        };
        let labels = [
            ("node", node),
            ("device", dev),
            ("rdma_port", port.as_str()),
        ];
        for (name, value) in obj {
            if ADDRESS.contains(&name.as_str()) {
                continue;
            }
            match value.as_u64() {
                Some(n) => p.push(rdma_sample(name, &labels, n)),
                None => p.unknown(&format!("{name}: {value}")),
            }
        }
    }
    Some(p)
}
