//! The NX-API `ins_api` envelope: a `cli_show` request for one or several commands, and the
//! reply split back into one output per command.

use crate::collect::CollectError;
use serde_json::{Value, json};

/// The `cli_show` request body; several commands go in one request, joined by ` ;`.
pub fn request_body(cmds: &[&str]) -> String {
    json!({
        "ins_api": {
            "version": "1.0",
            "type": "cli_show",
            "chunk": "0",
            "sid": "1",
            "input": cmds.join(" ;"),
            "output_format": "json",
        }
    })
    .to_string()
}

/// One output per command of the request. Each is the command's `body` as JSON text (what the
/// NX-OS parsers read), the body itself when the switch sent text, or why that command failed.
/// `None` when the reply is not an `ins_api` document at all.
pub fn split_reply(reply: &[u8], n: usize) -> Option<Vec<Result<String, CollectError>>> {
    let v: Value = serde_json::from_slice(reply).ok()?;
    let outputs = v.pointer("/ins_api/outputs/output")?;
    // One command: `output` is an object; several: a list (the same quirk as `ROW_*`).
    let list: Vec<&Value> = match outputs {
        Value::Array(a) => a.iter().collect(),
        o => vec![o],
    };
    let mut out: Vec<Result<String, CollectError>> = list.into_iter().map(one).collect();
    out.truncate(n);
    while out.len() < n {
        out.push(Err(CollectError::Command {
            status: "nxapi".into(),
            stderr: format!(
                "the reply has {} outputs for {n} commands",
                out.len().min(n)
            ),
        }));
    }
    Some(out)
}

fn one(o: &Value) -> Result<String, CollectError> {
    let code = o.get("code").map(text).unwrap_or_default();
    if code != "200" {
        let mut msg = o.get("msg").map(text).unwrap_or_default();
        if let Some(cli) = o.get("clierror").map(text).filter(|s| !s.is_empty()) {
            msg = if msg.is_empty() {
                cli
            } else {
                format!("{msg}: {cli}")
            };
        }
        if msg.is_empty() {
            msg = "no message".into();
        }
        let status = if code.is_empty() {
            "nxapi: no code".to_string()
        } else {
            format!("nxapi {code}")
        };
        return Err(CollectError::Command {
            status,
            stderr: msg,
        });
    }
    Ok(match o.get("body") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(b) => b.to_string(),
    })
}

/// A scalar as text (`code` comes as "200" or 200); anything else is serialised.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_string(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_joins_commands() {
        let b: Value =
            serde_json::from_str(&request_body(&["show interface", "show version"])).expect("ok");
        assert_eq!(b["ins_api"]["input"], "show interface ;show version");
        assert_eq!(b["ins_api"]["type"], "cli_show");
        assert_eq!(b["ins_api"]["output_format"], "json");
    }

    #[test]
    fn outputs_one_or_many_with_errors() {
        let one_out =
            br#"{"ins_api":{"outputs":{"output":{"code":"200","msg":"Success","body":{"a":1}}}}}"#;
        let r = split_reply(one_out, 1).expect("ok");
        assert_eq!(r, vec![Ok(r#"{"a":1}"#.to_string())]);

        let many = br#"{"ins_api":{"outputs":{"output":[
            {"code":200,"msg":"Success","body":{"b":"2"}},
            {"code":"400","msg":"Input CLI command error","clierror":"% Invalid command\n"},
            {"code":"200","msg":"Success","body":""}]}}}"#;
        let r = split_reply(many, 4).expect("ok");
        assert_eq!(r[0], Ok(r#"{"b":"2"}"#.to_string()));
        assert_eq!(
            r[1],
            Err(CollectError::Command {
                status: "nxapi 400".into(),
                stderr: "Input CLI command error: % Invalid command".into()
            })
        );
        assert_eq!(r[2], Ok(String::new()));
        assert!(
            matches!(&r[3], Err(CollectError::Command { stderr, .. }) if stderr.contains("3 outputs for 4"))
        );
        assert!(split_reply(b"<html>", 1).is_none());
        assert!(split_reply(br#"{"x":1}"#, 1).is_none());
    }

    proptest::proptest! {
        // Truncated or mangled replies give errors per command, never a panic or a wrong count.
        #[test]
        fn mangled_replies_no_panic(cut in 0usize..400, junk in "[\\[\\]{}\":,0-9a-z ]{0,40}", n in 1usize..4) {
            let reply = r#"{"ins_api":{"outputs":{"output":[{"code":"200","body":{"TABLE_x":{"ROW_x":[{"a":"1"}]}}},{"code":400,"msg":"bad"}]}}}"#;
            let cut = cut.min(reply.len());
            for text in [format!("{}{junk}", &reply[..cut]), reply.replace("200", &junk)] {
                if let Some(out) = split_reply(text.as_bytes(), n) {
                    proptest::prop_assert_eq!(out.len(), n);
                }
            }
        }
    }
}
