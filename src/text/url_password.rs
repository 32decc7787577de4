//! The password of a URL, kept out of everything iopath shows or stores: every URL in a text
//! has the password of its userinfo (`scheme://USER:PASSWORD@HOST/…`) replaced by `***`.
//!
//! The authority of a URL ends at the first `/`, `?` or `#` after `://` (RFC 3986); the
//! userinfo is what comes before its last `@`, and the password what follows the first `:`
//! in it. A password holding `/`, `?`, `#` or `@` must therefore be percent-encoded to be a
//! password at all (`%2F`, `%40`, …). An empty password (`user:@host`) hides nothing and is
//! left as it is; a URL without userinfo is not touched.
//!
//! ```
//! use iopath::text::url_password::mask_url_passwords;
//! assert_eq!(mask_url_passwords("smb://alice:s3cret@nas/share/f"), "smb://alice:***@nas/share/f");
//! assert_eq!(
//!     mask_url_passwords("error: nfs://u:p%40ss@[::1]:2049/srv/f: no user belongs in the URL"),
//!     "error: nfs://u:***@[::1]:2049/srv/f: no user belongs in the URL"
//! );
//! assert_eq!(mask_url_passwords("nbd://host/disk@snap"), "nbd://host/disk@snap");
//! ```

use std::borrow::Cow;

/// What a masked password is shown as.
pub const MASK: &str = "***";

/// `text` with the password of every URL in it replaced by [`MASK`]; borrowed when there is
/// none.
pub fn mask_url_passwords(text: &str) -> Cow<'_, str> {
    let mut masked = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let authority_start = search + found + 3;
        let authority_len = text[authority_start..]
            .find(ends_authority)
            .unwrap_or(text.len() - authority_start);
        let authority = &text[authority_start..authority_start + authority_len];
        search = authority_start;
        let Some(at) = authority.rfind('@') else {
            continue;
        };
        let Some(colon) = authority[..at].find(':') else {
            continue;
        };
        if colon + 1 == at {
            continue;
        }
        masked.push_str(&text[copied..authority_start + colon + 1]);
        masked.push_str(MASK);
        copied = authority_start + at;
        search = copied;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    masked.push_str(&text[copied..]);
    Cow::Owned(masked)
}

/// A command line as a result or the history keeps it: each argument with its URL passwords
/// masked.
pub fn masked_arguments(arguments: impl IntoIterator<Item = String>) -> Vec<String> {
    arguments
        .into_iter()
        .map(|argument| match mask_url_passwords(&argument) {
            Cow::Borrowed(_) => argument,
            Cow::Owned(masked) => masked,
        })
        .collect()
}

/// Where the authority of a URL ends: its path, query or fragment, or the end of the URL in a
/// message (white space, a quote, a bracket that closes it).
fn ends_authority(c: char) -> bool {
    matches!(
        c,
        '/' | '?' | '#' | '\'' | '"' | '`' | '<' | '>' | '(' | ')'
    ) || c.is_whitespace()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn url_shapes() {
        for (given, shown) in [
            ("smb://alice:pw@nas", "smb://alice:***@nas"),
            ("smb://alice:pw@nas/s/f?x=1", "smb://alice:***@nas/s/f?x=1"),
            (
                "iscsi://u:pw@[fe80::1%25eth0]:3260/iqn.x/0",
                "iscsi://u:***@[fe80::1%25eth0]:3260/iqn.x/0",
            ),
            ("nbd://u:p%40w%2Fx@h:10809/e", "nbd://u:***@h:10809/e"),
            ("nbd://u:p@w@h/e", "nbd://u:***@h/e"),
            ("nfs://WORK;u:pw@h/srv/f", "nfs://WORK;u:***@h/srv/f"),
            ("smb://u:@h/s/f", "smb://u:@h/s/f"),
            ("smb://alice@h/s/f", "smb://alice@h/s/f"),
            ("smb://[::1]:445/s/f", "smb://[::1]:445/s/f"),
            ("smb://h/s/f@x:y", "smb://h/s/f@x:y"),
            (
                "'smb://a:b@h' and 'nfs://c:d@i/e'",
                "'smb://a:***@h' and 'nfs://c:***@i/e'",
            ),
            ("no url: a:b@c", "no url: a:b@c"),
            ("://a:b@c", "://a:***@c"),
            ("x://", "x://"),
        ] {
            assert_eq!(mask_url_passwords(given), shown, "{given}");
        }
        assert!(matches!(mask_url_passwords("smb://h/s"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_command_line_is_kept_masked() {
        let given = ["iopath", "run", "nfs://u:pw@h/srv/f", "--rw", "read"].map(String::from);
        assert_eq!(
            masked_arguments(given),
            ["iopath", "run", "nfs://u:***@h/srv/f", "--rw", "read"]
        );
    }

    proptest! {
        #[test]
        fn a_password_never_shows(
            scheme in "(smb|nfs|nbd|iscsi|http)",
            user in "[A-Za-z0-9._;-]{0,8}",
            password in "([A-Za-z0-9!$&*+,;=._~-]|%40|%2F|%3A|:){1,16}",
            host in "([a-z0-9.-]{1,12}|\\[[0-9a-f:]{2,16}\\])",
            port in proptest::option::of(1u16..),
            rest in "(/[A-Za-z0-9@._-]{0,12}){0,3}(\\?[a-z=&0-9]{0,8})?",
            before in "[a-z :]{0,6}",
            after in "(: [a-z ]{0,10})?",
        ) {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let url = format!("{scheme}://{user}:{password}@{host}{port}{rest}");
            let text = format!("{before}{url}{after}");
            let masked = mask_url_passwords(&text);
            let expected = format!("{before}{scheme}://{user}:{MASK}@{host}{port}{rest}{after}");
            prop_assert_eq!(masked.as_ref(), expected.as_str());
            // Unchanged when there is nothing to hide.
            let plain = format!("{before}{scheme}://{host}{port}{rest}{after}");
            let unchanged = mask_url_passwords(&plain);
            prop_assert_eq!(unchanged.as_ref(), plain.as_str());
        }
    }
}
