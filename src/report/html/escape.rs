//! Text made safe for HTML and SVG, in element content and in quoted attribute values.
//!
//! ```
//! use iopath::report::html::escape::escape;
//! assert_eq!(escape("a<b & \"c\" 'd'"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;");
//! ```

/// Escapes `&`, `<`, `>`, `"` and `'`; drops control characters other than tab and newline,
/// which HTML does not allow.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(character),
            control if control.is_control() => {}
            other => out.push(other),
        }
    }
    out
}

/// An `id` attribute value made of `parts`: letters, digits and `-` only, so that it needs no
/// escaping and works in a `#fragment`.
pub fn anchor(parts: &[&str]) -> String {
    let mut id = String::new();
    for part in parts {
        if !id.is_empty() {
            id.push('-');
        }
        let mut dash = false;
        for character in part.chars() {
            if character.is_ascii_alphanumeric() {
                id.push(character.to_ascii_lowercase());
                dash = false;
            } else if !dash {
                id.push('-');
                dash = true;
            }
        }
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_go_and_anchors_are_plain() {
        assert_eq!(escape("a\u{1b}[1mb\n"), "a[1mb\n");
        assert_eq!(anchor(&["r0", "SEQ1M Q8 read"]), "r0-seq1m-q8-read");
        assert_eq!(anchor(&["x", "µs/ü"]), "x--s-");
    }
}
