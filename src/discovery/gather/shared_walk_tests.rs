//! The walks one run's targets share: a filesystem's once per directory, a server's route once.

use super::{SharedWalks, gather, gather_sharing};
use crate::discovery::Machine;
use crate::discovery::facts::PathFacts;
use crate::targets::inspect;

#[test]
fn files_of_one_directory_share_one_walk_and_read_as_if_walked_alone() {
    let directory = tempfile::tempdir().unwrap();
    let machine = Machine::this_host();
    let mut shared = SharedWalks::default();
    for index in 0..30 {
        let path = directory.path().join(format!("job.0.{index}"));
        std::fs::write(&path, [1u8; 8192]).unwrap();
        let info = inspect(&path).unwrap();
        let walked_with_others = gather_sharing(&info, None, &machine, &mut shared);
        let walked_alone = gather(&info, None, &machine);
        assert_eq!(walked_with_others, walked_alone, "{}", path.display());
        let PathFacts::File(file) = walked_with_others else {
            panic!("a file's path is a file's");
        };
        assert_eq!(file.filesystem.file, path, "each file keeps its own name");
    }
    assert_eq!(shared.walks(), 1, "thirty files in one directory, one walk");
    let other = tempfile::tempdir().unwrap();
    let path = other.path().join("elsewhere");
    std::fs::write(&path, [1u8; 4096]).unwrap();
    gather_sharing(&inspect(&path).unwrap(), None, &machine, &mut shared);
    assert_eq!(shared.walks(), 2, "another directory is walked on its own");
}

#[test]
fn volumes_of_one_server_share_its_route() {
    let machine = Machine::this_host();
    let mut shared = SharedWalks::default();
    let volume = |name: &str| {
        let url = format!("nbd://127.0.0.1:10809/{name}");
        crate::result::TargetInfo::unexamined(url, crate::result::TargetKind::Nbd, 0)
    };
    let first = gather_sharing(
        &volume("a"),
        Some(("127.0.0.1", 10809)),
        &machine,
        &mut shared,
    );
    let second = gather_sharing(
        &volume("b"),
        Some(("127.0.0.1", 10809)),
        &machine,
        &mut shared,
    );
    assert_eq!(first, second);
    assert_eq!(shared.walks(), 1);
    gather_sharing(
        &volume("c"),
        Some(("127.0.0.2", 10809)),
        &machine,
        &mut shared,
    );
    assert_eq!(shared.walks(), 2, "another server has a route of its own");
}
