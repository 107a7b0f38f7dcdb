//! Borrowed views of a Prometheus API answer. Label names and values point into the answer's text
//! unless a JSON escape forced a copy, and a series' labels are a short list searched in order,
//! not a hash map: a poll of 2000 nodes maps ~14k series, and copying every label into its own
//! `String` (then hashing it) was most of the mapping's time.

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
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

    /// Every label's name, in the answer's order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.0.as_ref())
    }
}

/// One series of an answer: its labels and its sample(s). Read into one scratch item that is
/// reused for every series of the answer (no allocation per series).
#[derive(Default)]
pub struct Item<'a> {
    pub metric: Labels<'a>,
    /// An instant vector's sample.
    pub value: Option<(f64, Str<'a>)>,
    /// A range vector's samples, oldest first.
    pub values: Vec<(f64, Str<'a>)>,
}

/// Hands each series of a Prometheus API answer (an instant or range vector) to `f` as it is
/// read: a 2000-node poll is ~14k series, and collecting them into a `Vec` first (two vectors
/// each) then dropping it was a fifth of the mapping's time.
pub fn each_item<'a>(json: &'a str, f: &mut dyn FnMut(&Item<'a>)) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(json);
    let a = AnswerSeed(f)
        .deserialize(&mut de)
        .and_then(|a| de.end().map(|_| a))
        .map_err(|e| format!("not a Prometheus API answer: {e}"))?;
    if a.status != "success" {
        return Err(format!(
            "Prometheus: {}",
            a.error.unwrap_or_else(|| a.status.clone())
        ));
    }
    match a.result_type.as_deref() {
        None => Err("Prometheus answer without data".into()),
        Some("vector" | "matrix") => Ok(()),
        Some(t) => Err(format!("expected an instant or range vector, got {t}")),
    }
}

/// What an answer says besides its series.
#[derive(Default)]
struct Envelope {
    status: String,
    error: Option<String>,
    /// `None`: no `data`.
    result_type: Option<String>,
}

struct AnswerSeed<'f, 'a>(&'f mut dyn FnMut(&Item<'a>));

impl<'de: 'a, 'a> DeserializeSeed<'de> for AnswerSeed<'_, 'a> {
    type Value = Envelope;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Envelope, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for AnswerSeed<'_, 'a> {
    type Value = Envelope;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an API answer")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Envelope, M::Error> {
        let mut env = Envelope::default();
        while let Some(k) = m.next_key::<Str>()? {
            match k.0.as_ref() {
                "status" => env.status = m.next_value()?,
                "error" => env.error = m.next_value()?,
                "data" => env.result_type = m.next_value_seed(DataSeed(&mut *self.0))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(env)
    }
}

/// `data`: its `resultType`, its `result` handed series by series (a scalar or string result,
/// which is not a list of series, fails to read).
struct DataSeed<'f, 'a>(&'f mut dyn FnMut(&Item<'a>));

impl<'de: 'a, 'a> DeserializeSeed<'de> for DataSeed<'_, 'a> {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for DataSeed<'_, 'a> {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the answer's data")
    }
    fn visit_none<E>(self) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_map(self)
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Option<String>, M::Error> {
        let mut result_type = String::new();
        while let Some(k) = m.next_key::<Str>()? {
            match k.0.as_ref() {
                "resultType" => result_type = m.next_value()?,
                "result" if matches!(result_type.as_str(), "" | "vector" | "matrix") => {
                    m.next_value_seed(ResultSeed(&mut *self.0))?
                }
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(result_type))
    }
}

/// `result`: each series read into one scratch [`Item`] and handed on.
struct ResultSeed<'f, 'a>(&'f mut dyn FnMut(&Item<'a>));

impl<'de: 'a, 'a> DeserializeSeed<'de> for ResultSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ResultSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of series")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<(), S::Error> {
        let mut item = Item::default();
        while s.next_element_seed(ItemSeed(&mut item))?.is_some() {
            (self.0)(&item);
        }
        Ok(())
    }
}

/// One series into the scratch item (cleared first, its vectors' room kept).
struct ItemSeed<'i, 'a>(&'i mut Item<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for ItemSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ItemSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a series")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        let it = self.0;
        it.metric.0.clear();
        it.value = None;
        it.values.clear();
        while let Some(k) = m.next_key::<Str>()? {
            match k.0.as_ref() {
                "metric" => m.next_value_seed(Into(&mut it.metric.0))?,
                "value" => it.value = m.next_value()?,
                "values" => m.next_value_seed(Into(&mut it.values))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A JSON map (labels) or list (samples) appended to a kept vector.
struct Into<'v, T>(&'v mut Vec<T>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for Into<'_, (Str<'a>, Str<'a>)> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Into<'_, (Str<'a>, Str<'a>)> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a label map")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while let Some(kv) = m.next_entry::<Str<'a>, Str<'a>>()? {
            self.0.push(kv);
        }
        Ok(())
    }
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for Into<'_, (f64, Str<'a>)> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Into<'_, (f64, Str<'a>)> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of samples")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<(), S::Error> {
        while let Some(v) = s.next_element::<(f64, Str<'a>)>()? {
            self.0.push(v);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_strings_are_copied_plain_ones_borrowed() {
        let j = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"__name__":"x","device":"a\"b","node":"n\u00e9"},"value":[1,"2"]}]}}"#;
        let mut n = 0;
        each_item(j, &mut |it| {
            n += 1;
            assert_eq!(it.metric.get("device"), Some("a\"b"));
            assert_eq!(it.metric.get("node"), Some("né"));
            assert!(matches!(it.metric.0[0].1.0, Cow::Borrowed("x")));
            assert_eq!(it.metric.get("port"), None);
        })
        .expect("answer");
        assert_eq!(n, 1);
    }

    /// Each series is handed with only its own labels and samples (the scratch item is cleared),
    /// and what is not a vector or not an answer is an error.
    #[test]
    fn series_come_one_by_one_and_bad_answers_are_errors() {
        let j = r#"{"status":"success","data":{"result":[
            {"metric":{"a":"1","b":"2"},"values":[[1,"5"],[2,"6"]]},
            {"metric":{"c":"3"},"value":[3,"7"]}],"resultType":"matrix"}}"#;
        let mut seen = Vec::new();
        each_item(j, &mut |it| {
            let labels: Vec<String> = it
                .metric
                .0
                .iter()
                .map(|(k, v)| format!("{}={}", k.0, v.0))
                .collect();
            let values: Vec<String> = it
                .values
                .iter()
                .map(|(t, v)| format!("{t}:{}", v.0))
                .collect();
            seen.push((
                labels.join(","),
                values.join(","),
                it.value.as_ref().map(|(_, v)| v.0.to_string()),
            ));
        })
        .expect("answer");
        assert_eq!(
            seen,
            [
                ("a=1,b=2".into(), "1:5,2:6".into(), None),
                ("c=3".into(), String::new(), Some("7".into())),
            ]
        );
        let err = |j: &str| each_item(j, &mut |_| {}).expect_err(j);
        assert_eq!(
            err(r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#),
            "Prometheus: parse error"
        );
        assert_eq!(
            err(r#"{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}"#),
            "expected an instant or range vector, got scalar"
        );
        assert_eq!(
            err(r#"{"status":"success"}"#),
            "Prometheus answer without data"
        );
        assert!(
            err(r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{}"#)
                .starts_with("not a Prometheus API answer")
        );
        assert!(err("<html>").starts_with("not a Prometheus API answer"));
    }
}
