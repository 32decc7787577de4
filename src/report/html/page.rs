//! The document around the sections: head with the inline style sheet, the page header with
//! the runs and a table of contents, and the footer.

use super::escape::escape;
use crate::report::model::RunReport;
use std::fmt::Write;

/// The style sheet, inlined into every report.
const STYLE: &str = include_str!("style.css");

/// The page's Content-Security-Policy: nothing may be loaded from anywhere (no script, no
/// image, no font, no frame, no connection); only the inline style sheet and the `style`
/// attributes of bars and swatches apply. Charts are inline SVG, which is part of the document
/// and needs no source. `base-uri` and `form-action`, which `default-src` does not cover, are
/// shut too.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// One section of the page.
pub struct Section {
    /// Anchor.
    pub id: &'static str,
    /// Heading, also in the table of contents.
    pub title: &'static str,
    /// Its HTML, after the heading.
    pub body: String,
}

/// The whole page of a report of `runs`.
pub fn document(title: &str, runs: &[RunReport<'_>], sections: &[Section]) -> String {
    let footer = format!(
        "Written by iopath {} from the RunResult{} alone. \
         MB = 10<sup>6</sup> bytes, MiB = 2<sup>20</sup> bytes; latency is measured from submission to completion; \
         ± is the 95 % confidence interval of the per-interval values (1 s; 250 ms in runs under 10 s).",
        escape(env!("CARGO_PKG_VERSION")),
        if runs.len() == 1 { "" } else { "s" }
    );
    page(title, runs, sections, &footer)
}

/// The whole page, ending with `footer` (HTML).
pub fn page(title: &str, runs: &[RunReport<'_>], sections: &[Section], footer: &str) -> String {
    let mut html = String::with_capacity(64 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"iopath {}\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape(env!("CARGO_PKG_VERSION")),
        escape(title)
    );
    let _ = write!(html, "<header class=\"page\"><h1>{}</h1>", escape(title));
    for run in runs {
        let result = run.result;
        let partial = if result.partial {
            " · <b>stopped early: partial results</b>"
        } else {
            ""
        };
        let _ = write!(
            html,
            "<p><b>{}</b>: {} test{} on {} · {} · iopath {}{partial}</p>",
            escape(&run.label),
            result.tests.len(),
            if result.tests.len() == 1 { "" } else { "s" },
            escape(&result.host.hostname),
            escape(&result.started_at),
            escape(&result.iopath_version)
        );
    }
    html.push_str("<nav class=\"toc\">");
    for section in sections {
        let _ = write!(
            html,
            "<a href=\"#{}\">{}</a>",
            section.id,
            escape(section.title)
        );
    }
    html.push_str("</nav></header>\n");
    for section in sections {
        let _ = write!(
            html,
            "<section id=\"{}\">\n<h2>{}</h2>\n{}\n</section>\n",
            section.id,
            escape(section.title),
            section.body
        );
    }
    let _ = write!(
        html,
        "<footer class=\"page\">{footer}</footer>\n</main>\n</body>\n</html>\n"
    );
    html
}
