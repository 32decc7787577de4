//! A small reader of Rust source for the structural tests (tests/structure/import_graph.rs,
//! tests/structure/path_gate.rs): tokens as far as paths, calls and string literals are concerned,
//! with comments, character literals, lifetimes and numbers dropped.

/// One token of Rust source, as far as paths (and the machine paths of string literals) are
/// concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// An identifier or keyword (`r#` dropped).
    Ident(String),
    /// `::`.
    PathSeparator,
    /// Any other punctuation character.
    Punct(char),
    /// A string literal (plain, byte, C or raw), its text between the quotes as written
    /// (escapes not decoded), and the line it starts on.
    Literal { text: String, line: usize },
}

/// Splits Rust source into identifiers, `::`, punctuation and string literals, dropping
/// comments, character literals, lifetimes and numbers.
pub fn tokenize(text: &str) -> Vec<Token> {
    tokenize_with_lines(text)
        .into_iter()
        .map(|(token, _)| token)
        .collect()
}

/// [`tokenize`], each token with the line it starts on.
pub fn tokenize_with_lines(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    // Each token with the index of its first character.
    let mut tokens: Vec<(Token, usize)> = Vec::new();
    let mut i = 0;
    let at = |index: usize| chars.get(index).copied().unwrap_or('\0');
    // Lines counted up to `counted`.
    let (mut line, mut counted) = (1usize, 0usize);
    let mut literal = |start: usize, end: usize| {
        line += chars[counted..start].iter().filter(|&&c| c == '\n').count();
        counted = start;
        let quoted = &chars[start..end.min(chars.len())];
        let open = quoted.iter().position(|&c| c == '"').map_or(0, |p| p + 1);
        let close = quoted
            .iter()
            .rposition(|&c| c == '"')
            .unwrap_or(quoted.len());
        Token::Literal {
            text: quoted[open..close.max(open)].iter().collect(),
            line,
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            tokens.push((literal(i, end), i));
            i = end;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') || (c == 'c' && at(i + 1) == '"') {
            let start = i;
            i += if c == '"' { 1 } else { 2 };
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            tokens.push((literal(start, i), start));
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            i += if c == '\'' { 1 } else { 2 };
            if at(i) == '\\' {
                while i < chars.len() && chars[i] != '\'' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            } else if at(i + 1) == '\'' {
                i += 2;
            }
            // Otherwise a lifetime or label: its name follows as an identifier we skip.
            else {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            if c == 'r' && at(i + 1) == '#' {
                i += 2;
            }
            let name_start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push((
                Token::Ident(chars[name_start..i].iter().collect()),
                name_start,
            ));
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push((Token::PathSeparator, i));
            i += 2;
        } else {
            tokens.push((Token::Punct(c), i));
            i += 1;
        }
    }
    let (mut line, mut counted) = (1usize, 0usize);
    tokens
        .into_iter()
        .map(|(token, start)| {
            line += chars[counted..start].iter().filter(|&&c| c == '\n').count();
            counted = start;
            (token, line)
        })
        .collect()
}

/// The index just past a raw (byte) string literal starting at `start`, if one starts there.
fn raw_string_end(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start;
    if chars.get(i) == Some(&'b') || chars.get(i) == Some(&'c') {
        i += 1;
    }
    if chars.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if chars.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(chars.len())
}

/// Whether `tokens[i..]` is the attribute `#[cfg(test)]`.
pub fn is_cfg_test(tokens: &[Token], i: usize) -> bool {
    let expected = [
        Token::Punct('#'),
        Token::Punct('['),
        Token::Ident("cfg".into()),
        Token::Punct('('),
        Token::Ident("test".into()),
        Token::Punct(')'),
        Token::Punct(']'),
    ];
    tokens.get(i..i + expected.len()) == Some(&expected[..])
}
