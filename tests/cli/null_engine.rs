//! The null engine does no I/O, so it touches no file: no temporary test file is made for it and
//! a missing file it names stays missing, while a file another engine's test of the same run
//! uses is created as usual.

use crate::common::*;

#[test]
fn no_test_file_is_created_for_the_null_engine() {
    let dir = tempfile::tempdir().unwrap();
    let short = ["--engine", "null", "--duration", "0.3", "--ramp", "0"];

    // No target: a temporary test file would be created and filled.
    let run = run_in(dir.path(), &[&short[..], &["--rw", "randread"]].concat());
    run.expect_status(0);
    assert!(!run.stderr.contains("creating"), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "note: the null engine does no I/O: no test file is created at ./.iopath-test-"
        ),
        "{}",
        run.stderr
    );
    let target = at(run.json(), &["targets", "0"]);
    assert_eq!(target["created_by_iopath"], false, "{target}");
    assert_eq!(u64_at(target, &["size_bytes"]), 1 << 30, "{target}");
    let hop = at(run.json(), &["paths", "0", "hops", "0", "description"]);
    assert!(hop.as_str().unwrap().ends_with("not on disk"), "{hop}");
    assert!(u64_at(run.json(), &["tests", "0", "total", "io_count"]) > 0);
    assert_eq!(list_dir(dir.path()), ["out.json"]);

    // A named missing file with a size: it stays missing, and the offsets stay within the size.
    let run = run_in(
        dir.path(),
        &[
            &short[..],
            &[
                "new.dat",
                "--size",
                "8m",
                "--rw",
                "randwrite",
                "--trace-io",
                "t.csv",
            ],
        ]
        .concat(),
    );
    run.expect_status(0);
    assert!(!dir.path().join("new.dat").exists(), "{}", run.stderr);
    let trace = std::fs::read_to_string(dir.path().join("t.csv")).unwrap();
    let ends: Vec<u64> = trace
        .lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            fields[3].parse::<u64>().unwrap() + fields[4].parse::<u64>().unwrap()
        })
        .collect();
    assert!(!ends.is_empty());
    assert!(
        ends.iter().all(|end| *end <= 8 << 20),
        "{:?}",
        ends.iter().max()
    );

    // Another engine on the same file in the same run: the file is made for it.
    let job = dir.path().join("both.toml");
    std::fs::write(
        &job,
        "targets = [{ path = \"both.dat\", size = \"4m\" }]\n\
         [defaults]\nduration = \"200ms\"\nramp = 0\n\
         [[test]]\nname = \"overhead\"\nengine = \"null\"\nrw = \"randread\"\n\
         [[test]]\nname = \"real\"\nengine = \"sync\"\nrw = \"randread\"\n",
    )
    .unwrap();
    let run = plain_in(dir.path(), &["run", "--job", "both.toml"]);
    run.expect_status(0);
    assert!(run.stderr.contains("creating"), "{}", run.stderr);
    assert_eq!(
        std::fs::metadata(dir.path().join("both.dat"))
            .unwrap()
            .len(),
        4 << 20
    );
}

#[test]
fn a_replay_on_the_null_engine_issues_the_logs_offsets_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("far.log"),
        "fio version 3 iolog\n0 data add\n0 data open\n10 data write 0 4096\n\
         20 data write 1073741824 4096\n30 data read 536870912 4096\n40 data close\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("replay.fio"),
        "[replay]\nioengine=null\nread_iolog=far.log\n",
    )
    .unwrap();
    let run = run_in(
        dir.path(),
        &["--job", "replay.fio", "--trace-io", "t.csv", "--no-history"],
    );
    run.expect_status(0);
    // The note says what decides the offsets: the log, not a 1 MiB bound.
    assert!(
        run.stderr.contains("ioengine=null does no I/O")
            && run.stderr.contains("the offsets are the log's"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("offsets fall within"),
        "{}",
        run.stderr
    );
    let trace = std::fs::read_to_string(dir.path().join("t.csv")).unwrap();
    let offsets: Vec<u64> = trace
        .lines()
        .skip(1)
        .map(|line| line.split(',').nth(3).unwrap().parse().unwrap())
        .collect();
    assert_eq!(offsets, [0, 1 << 30, 1 << 29], "{trace}");
    assert!(!dir.path().join("data").exists());
}
