//! `iopath explain`: the analysis of saved runs done again without I/O — with the run's own
//! paths, with links declared afterwards, and on a recorded machine that stands for the lab.

use crate::common::*;

/// `iopath explain ARGS`.
fn explain(args: &[&str]) -> RunOutput {
    let output = iopath()
        .arg("explain")
        .args(args)
        .output()
        .expect("iopath runs");
    into_run_output(output, None)
}

fn network_fixture() -> String {
    crate::support::fixtures::directory()
        .join("network.json")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_saved_run_is_explained_again_with_its_own_paths() {
    let saved = crate::support::fixtures::result("network");
    let evidence = &saved.tests[0].analysis.as_ref().unwrap().evidence;
    let out = explain(&[&network_fixture()]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("explained with the paths the run saw"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("1GbE [network link]"), "{}", out.stdout);
    assert!(out.stdout.contains("link-bound"), "{}", out.stdout);
    assert!(
        out.stdout.contains(evidence.as_str()),
        "{evidence}\n{}",
        out.stdout
    );
}

#[test]
fn a_link_declared_afterwards_changes_the_verdict_of_a_saved_run() {
    // The run declared 1GbE and filled it; declared as 10GbE it fills a tenth of it.
    let out = explain(&[&network_fixture(), "--link", "10gbe"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stdout.contains("10GbE"), "{}", out.stdout);
    assert!(!out.stdout.contains("link-bound"), "{}", out.stdout);
}

#[test]
fn a_saved_run_is_explained_on_a_recorded_machine_for_a_target_of_its_own() {
    let Some(root) = crate::support::foreign::capture("procfs-fixtures.ttar") else {
        return;
    };
    let root = root.to_string_lossy().into_owned();
    let out = explain(&[&network_fixture(), "--root", &root, "--target", "/dev/sdw"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "explained with the paths discovered on the machine recorded in {root}"
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Storage path of /dev/sdw"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("SAS 12G x4 [device link]"),
        "{}",
        out.stdout
    );
}

#[test]
fn explain_refuses_what_it_cannot_do_before_reading_anything() {
    let fixture = network_fixture();
    for (args, says) in [
        (
            vec![fixture.as_str(), "--target", "/dev/sdb"],
            "--root DIR or --here",
        ),
        (
            vec![fixture.as_str(), fixture.as_str(), "--json"],
            "--json prints one result",
        ),
        (
            vec![fixture.as_str(), "--root", "/nonexistent-machine"],
            "--root",
        ),
        (vec![fixture.as_str(), "--link", "9gfc"], "9gfc"),
        (vec!["/dev/zero"], "not a regular file"),
    ] {
        let out = explain(&args);
        assert_eq!(out.status, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}

#[test]
fn explain_json_is_the_saved_run_analysed_again() {
    let out = explain(&[&network_fixture(), "--link", "10gbe", "--json"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let result = iopath::report::json::read_json(&out.stdout).expect("a RunResult");
    let saved = crate::support::fixtures::result("network");
    assert_eq!(result.tests[0].read.bytes, saved.tests[0].read.bytes);
    let verdict = result.tests[0].analysis.as_ref().unwrap().verdict;
    assert_ne!(verdict, iopath::result::Verdict::LinkBound);
}
