//! fio's arithmetic in values: a value that starts with `(` is an expression of `+ - * / % ^`
//! and parentheses over numbers, which may carry the option's units (`(4k*3)`, `(2m-512)`).
//! In a time expression a bare number is microseconds, as fio's HOWTO says.

use super::suffixes::{size_multiplier, time_multiplier_ns};

/// How the numbers of an expression are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Units {
    /// Sizes: suffixes follow `kb_base`; the result is bytes.
    Bytes {
        /// 1024 or 1000.
        kb_base: u64,
    },
    /// Times: the result is nanoseconds; bare numbers are microseconds.
    Time,
    /// Plain numbers, no suffix.
    Number,
}

/// Deepest parenthesis nesting accepted.
const MAX_DEPTH: usize = 64;

/// Evaluates `text`, which must be a whole expression.
pub fn evaluate(text: &str, units: Units) -> Result<f64, String> {
    let mut parser = Parser {
        text: text.as_bytes(),
        position: 0,
        units,
        depth: 0,
    };
    let value = parser.sum()?;
    parser.skip_blanks();
    if parser.position != parser.text.len() {
        return Err(format!(
            "'{text}': unexpected '{}' in the expression",
            &text[parser.position..]
        ));
    }
    if !value.is_finite() {
        return Err(format!("'{text}': the expression has no finite value"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a [u8],
    position: usize,
    units: Units,
    depth: usize,
}

impl Parser<'_> {
    fn skip_blanks(&mut self) {
        while self
            .text
            .get(self.position)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.position += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_blanks();
        self.text.get(self.position).copied()
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        while let Some(operator @ (b'+' | b'-')) = self.peek() {
            self.position += 1;
            let right = self.product()?;
            value = if operator == b'+' {
                value + right
            } else {
                value - right
            };
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.power()?;
        while let Some(operator @ (b'*' | b'/' | b'%')) = self.peek() {
            self.position += 1;
            let right = self.power()?;
            value = match operator {
                b'*' => value * right,
                _ if right == 0.0 => return Err("division by zero in the expression".into()),
                b'/' => value / right,
                _ => value % right,
            };
        }
        Ok(value)
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.peek() == Some(b'^') {
            self.position += 1;
            let exponent = self.nested(Self::power)?;
            return Ok(base.powf(exponent));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.peek() == Some(b'-') {
            self.position += 1;
            return Ok(-self.nested(Self::unary)?);
        }
        self.primary()
    }

    fn nested(&mut self, rule: fn(&mut Self) -> Result<f64, String>) -> Result<f64, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("the expression nests deeper than {MAX_DEPTH}"));
        }
        let value = rule(self);
        self.depth -= 1;
        value
    }

    fn primary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'(') => {
                self.position += 1;
                let value = self.nested(Self::sum)?;
                if self.peek() != Some(b')') {
                    return Err("a '(' of the expression is not closed".into());
                }
                self.position += 1;
                Ok(value)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(c) => Err(format!(
                "unexpected '{}' in the expression",
                char::from(c).escape_default()
            )),
            None => Err("the expression ends too early".into()),
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.position;
        let hex = self.text[start..].starts_with(b"0x") || self.text[start..].starts_with(b"0X");
        let mut end = if hex { start + 2 } else { start };
        while self.text.get(end).is_some_and(|c| {
            if hex {
                c.is_ascii_hexdigit()
            } else {
                c.is_ascii_digit() || *c == b'.'
            }
        }) {
            end += 1;
        }
        let digits = std::str::from_utf8(&self.text[start..end]).unwrap_or("");
        let value = if hex {
            u64::from_str_radix(&digits[2..], 16)
                .map(|v| v as f64)
                .map_err(|_| format!("'{digits}' is not a number"))?
        } else {
            digits
                .parse::<f64>()
                .map_err(|_| format!("'{digits}' is not a number"))?
        };
        let mut suffix_end = end;
        while self
            .text
            .get(suffix_end)
            .is_some_and(|c| c.is_ascii_alphabetic())
        {
            suffix_end += 1;
        }
        let suffix = std::str::from_utf8(&self.text[end..suffix_end]).unwrap_or("");
        self.position = suffix_end;
        let multiplier = match self.units {
            Units::Bytes { kb_base } => size_multiplier(suffix, kb_base)
                .ok_or_else(|| format!("'{digits}{suffix}': unknown size unit '{suffix}'"))?,
            Units::Time if suffix.is_empty() => 1_000.0,
            Units::Time => time_multiplier_ns(suffix)
                .ok_or_else(|| format!("'{digits}{suffix}': unknown time unit '{suffix}'"))?
                as f64,
            Units::Number if suffix.is_empty() => 1.0,
            Units::Number => return Err(format!("'{digits}{suffix}': a plain number is needed")),
        };
        Ok(value * multiplier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: Units = Units::Bytes { kb_base: 1024 };

    #[test]
    fn operators_follow_precedence() {
        assert_eq!(evaluate("(1+2*3)", Units::Number), Ok(7.0));
        assert_eq!(evaluate("((1+2)*3)", Units::Number), Ok(9.0));
        assert_eq!(evaluate("(2^3^2)", Units::Number), Ok(512.0));
        assert_eq!(evaluate("(10 % 4 - -1)", Units::Number), Ok(3.0));
        assert_eq!(evaluate("(0x10/4)", Units::Number), Ok(4.0));
    }

    #[test]
    fn units_apply_to_numbers() {
        assert_eq!(evaluate("(4k*3)", BYTES), Ok(12288.0));
        assert_eq!(evaluate("(1m-512)", BYTES), Ok(1_048_064.0));
        assert_eq!(evaluate("(2k)", Units::Bytes { kb_base: 1000 }), Ok(2000.0));
        assert_eq!(evaluate("(10)", Units::Time), Ok(10_000.0));
        assert_eq!(evaluate("(1s+500ms)", Units::Time), Ok(1.5e9));
    }

    #[test]
    fn bad_expressions_are_refused() {
        for bad in [
            "(", "()", "(1+)", "(1/0)", "(4q)", "(1))", "(1 2)", "(1k)x", "(\u{e9})",
        ] {
            assert!(evaluate(bad, BYTES).is_err(), "{bad}");
        }
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(evaluate(&deep, Units::Number).is_err());
        let deep_minus = format!("({}1)", "-".repeat(500));
        assert!(evaluate(&deep_minus, Units::Number).is_err());
    }
}
