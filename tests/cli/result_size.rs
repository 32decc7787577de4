//! A saved result that grows with its files by little more than their names: the files of one
//! job on one filesystem share one storage path in the JSON, and whatever reads the result (the
//! exporters, `compare`, `report`, `explain`) sees every file, exactly as in a result that holds
//! each one whole (as schema version 1 wrote them).

use crate::common::{disk_tempdir, iopath, run_in};
use iopath::report::csv::write_iometer_csv;
use iopath::report::fio_json::write_fio_json;
use iopath::report::html::write_html;
use iopath::report::json::read_json;
use iopath::report::markdown::write_markdown;
use iopath::report::model::Report;
use iopath::result::RunResult;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The saved result of a timed 4 KiB random-read job of `files` files of 4 KiB, made in a
/// directory of its own under `dir`; returns the result's path.
fn run_files(dir: &Path, files: u32) -> PathBuf {
    let run_dir = dir.join(format!("run-{files}"));
    let data = run_dir.join("files");
    std::fs::create_dir_all(&data).unwrap();
    let job = format!(
        "[many]\nioengine=psync\nrw=randread\nbs=4k\nfilesize=4k\nnrfiles={files}\ntime_based\nruntime=200ms\ndirectory={}\n",
        data.display()
    );
    std::fs::write(run_dir.join("job.fio"), job).unwrap();
    let output = run_in(&run_dir, &["--job", "job.fio", "--no-history"]);
    output.expect_status(0);
    run_dir.join("out.json")
}

/// `result` as schema version 1 saved it: every target and every path whole, every target
/// index a number of its own.
fn whole_version_1(result: &RunResult) -> Value {
    let mut json = serde_json::to_value(result).unwrap();
    json["schema_version"] = 1.into();
    json["targets"] = Value::Array(result.targets.iter().map(to_value).collect());
    json["paths"] = Value::Array(result.paths.iter().map(to_value).collect());
    let tests = json["tests"].as_array_mut().unwrap();
    for (test_json, test) in tests.iter_mut().zip(&result.tests) {
        let jobs = test_json["jobs"].as_array_mut().unwrap();
        for (job_json, job) in jobs.iter_mut().zip(&test.jobs) {
            job_json["target_indexes"] = job.target_indexes.clone().into();
        }
    }
    json
}

fn to_value(item: &impl serde::Serialize) -> Value {
    serde_json::to_value(item).unwrap()
}

fn read(path: &Path) -> RunResult {
    read_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_result_of_1000_files_holds_little_more_than_their_names() {
    let dir = disk_tempdir();
    let one = run_files(dir.path(), 1);
    let thousand = run_files(dir.path(), 1000);
    let size = |path: &Path| std::fs::metadata(path).unwrap().len();
    // What grows with the files: the targets, the paths and the jobs' lists of targets. The
    // rest (figures, analysis) differs from run to run by more than a file's share on a busy
    // machine, in either direction.
    let files_part = |path: &Path| -> u64 {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap().len() as u64;
        let jobs: u64 = json["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|test| pretty(&test["jobs"]))
            .sum();
        pretty(&json["targets"]) + pretty(&json["paths"]) + jobs
    };
    let per_file = files_part(&thousand).saturating_sub(files_part(&one)) / 999;
    let result = read(&thousand);
    // Every file is there, with its own name, size and path.
    assert_eq!(result.targets.len(), 1000);
    assert_eq!(
        result.targets.iter().map(|t| t.size_bytes).sum::<u64>(),
        1000 * 4096
    );
    assert_eq!(result.paths.len(), 1000);
    for (target, path) in result.targets.iter().zip(&result.paths) {
        assert_eq!(path.target, target.path);
        assert_eq!(path.hops[0].key, format!("file:{}", target.path));
    }
    let names = result
        .targets
        .iter()
        .map(|target| Path::new(&target.path).file_name().unwrap().len() as u64)
        .sum::<u64>();
    // Each further file is its name in the list of files alike to the first: spaces of
    // indentation, two quotes, a comma and a newline around it (14 bytes in the saved file).
    // Another 26 bytes a file leave room for what else differs (a job's figures, a few
    // hundred bytes in all). Whole, a file took 3.7 KiB.
    let bound = names / 1000 + 40;
    assert!(
        per_file <= bound && per_file <= 200,
        "{per_file} bytes per file, more than {bound}: {} bytes for 1 file, {} for 1000",
        size(&one),
        size(&thousand)
    );
}

#[test]
fn exporters_compare_and_report_read_a_compact_result_as_the_whole_one() {
    let dir = disk_tempdir();
    let compact_path = run_files(dir.path(), 300);
    let compact = read(&compact_path);
    let whole_path = dir.path().join("whole.json");
    let whole_text = serde_json::to_string_pretty(&whole_version_1(&compact)).unwrap();
    std::fs::write(&whole_path, &whole_text).unwrap();
    assert!(
        whole_text.len() > 4 * std::fs::metadata(&compact_path).unwrap().len() as usize,
        "the whole form is the larger"
    );
    let whole = read(&whole_path);
    assert_eq!(whole, compact);

    // Every exporter writes the same from both, totals included.
    let export = |result: &RunResult| {
        let report = Report::of_run(result);
        let mut out = Vec::new();
        write_fio_json(report.run(), true, &mut out).unwrap();
        write_iometer_csv(report.run(), &mut out).unwrap();
        write_markdown(report.run(), &mut out).unwrap();
        write_html(&report, &mut out).unwrap();
        out
    };
    assert_eq!(export(&compact), export(&whole));
    let mut fio = Vec::new();
    write_fio_json(Report::of_run(&compact).run(), false, &mut fio).unwrap();
    let fio: Value = serde_json::from_slice(&fio).unwrap();
    assert_eq!(
        fio["jobs"][0]["read"]["io_bytes"].as_u64(),
        Some(compact.tests[0].read.bytes)
    );

    // compare and report read the compact file as the whole one.
    let compared = iopath()
        .arg("compare")
        .arg("--json")
        .arg(format!("compact={}", compact_path.display()))
        .arg(format!("whole={}", whole_path.display()))
        .output()
        .unwrap();
    assert!(compared.status.success(), "{compared:?}");
    let compared: Value = serde_json::from_slice(&compared.stdout).unwrap();
    let text = compared.to_string();
    assert!(text.contains("compact") && text.contains("whole"), "{text}");
    let html = dir.path().join("report.html");
    let reported = iopath()
        .arg("report")
        .arg(&compact_path)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(reported.status.success(), "{reported:?}");
    // explain shows the path the 300 files share once, with a line for the 299 alike.
    let explained = iopath().arg("explain").arg(&compact_path).output().unwrap();
    assert!(explained.status.success(), "{explained:?}");
    let explained = String::from_utf8_lossy(&explained.stdout);
    assert_eq!(
        explained.matches("Storage path of").count(),
        1,
        "{explained}"
    );
    assert!(
        explained.contains("(and 299 more targets alike in"),
        "{explained}"
    );
    // So do the Markdown summary and the report, with their total size.
    let mut markdown = Vec::new();
    write_markdown(Report::of_run(&compact).run(), &mut markdown).unwrap();
    let markdown = String::from_utf8(markdown).unwrap();
    assert_eq!(markdown.matches("- **Target:**").count(), 1, "{markdown}");
    assert!(
        markdown.contains("- **Targets:** and 299 more targets alike in"),
        "{markdown}"
    );
    let html = std::fs::read_to_string(&html).unwrap();
    let last = Path::new(&compact.targets[299].path).file_name().unwrap();
    assert!(
        html.contains("and 299 more targets alike in")
            && html.contains("1.2 MiB in all")
            && html.contains(&format!("<code>{}</code>", last.to_string_lossy())),
        "{html}"
    );
}
