//! Compiles a JSON Schema `pattern` with Rust's `regex` crate, the engine jsonschema-rs uses, and
//! answers for each line of stdin (a name's UTF-8 bytes in hex) whether the pattern matches it.
//! The first line of output is `ok` or `error: <why the pattern was refused>`.
use std::io::BufRead;

fn main() {
    let pattern = std::env::args().nth(1).expect("usage: pattern-check <pattern> < hex lines");
    let re = match regex::Regex::new(&pattern) {
        Ok(re) => re,
        Err(err) => {
            println!("error: {}", err.to_string().replace('\n', " "));
            return;
        }
    };
    println!("ok");
    for line in std::io::stdin().lock().lines() {
        let hex = line.expect("stdin");
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect();
        let name = String::from_utf8(bytes).expect("UTF-8");
        println!("{}", re.is_match(&name));
    }
}
