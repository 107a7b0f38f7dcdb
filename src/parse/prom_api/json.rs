//! Borrowed views of a Prometheus API answer. Label names and values point into the answer's text
//! unless a JSON escape forced a copy, and a series' labels are a short list searched in order,
//! not a hash map: a poll of 2000 nodes maps ~14k series, and copying every label into its own
//! `String` (then hashing it) was most of the mapping's time.

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// A JSON string, borrowed from the text where it has no escape.
pub struct Str<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A series' labels, in the answer's order.
#[derive(Default)]
pub struct Labels<'a>(Vec<(Str<'a>, Str<'a>)>);

impl Labels<'_> {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.0 == name)
            .map(|(_, v)| v.0.as_ref())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Labels<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Labels<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a label map")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                let mut v = Vec::with_capacity(m.size_hint().unwrap_or(8));
                while let Some(kv) = m.next_entry::<Str<'a>, Str<'a>>()? {
                    v.push(kv);
                }
                Ok(Labels(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
pub struct Answer<'a> {
    pub status: String,
    #[serde(default, borrow)]
    pub data: Option<Data<'a>>,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Deserialize)]
pub struct Data<'a> {
    #[serde(rename = "resultType")]
    pub result_type: String,
    #[serde(default, borrow)]
    pub result: Vec<Item<'a>>,
}

#[derive(Deserialize)]
pub struct Item<'a> {
    #[serde(borrow)]
    pub metric: Labels<'a>,
    /// An instant vector's sample.
    #[serde(default, borrow)]
    pub value: Option<(f64, Str<'a>)>,
    /// A range vector's samples, oldest first.
    #[serde(default, borrow)]
    pub values: Vec<(f64, Str<'a>)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_strings_are_copied_plain_ones_borrowed() {
        let j = r#"{"metric":{"__name__":"x","device":"a\"b","node":"n\u00e9"},"value":[1,"2"]}"#;
        let it: Item = serde_json::from_str(j).expect("item");
        assert_eq!(it.metric.get("device"), Some("a\"b"));
        assert_eq!(it.metric.get("node"), Some("né"));
        assert!(matches!(it.metric.0[0].1.0, Cow::Borrowed("x")));
        assert_eq!(it.metric.get("port"), None);
    }
}
