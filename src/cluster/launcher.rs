//! What an MPI launcher (`mpirun`, `mpiexec`, `srun`) tells the processes it starts, read from
//! the environment before MPI is started (and whether iopath was built with MPI or not). Each
//! value is the first of its variables that is set to a number.

/// The first of `names` set to a number.
fn first_number(names: &[&str]) -> Option<u32> {
    names
        .iter()
        .find_map(|name| std::env::var(name).ok()?.trim().parse().ok())
}

/// Whether this process was started by an MPI launcher: only then does iopath start MPI.
pub fn launched() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_RANK",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some())
}

/// This process's rank (`None`: not started by a launcher).
pub fn rank() -> Option<u32> {
    first_number(&[
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
    ])
}

/// How many ranks the launcher started (`None`: not started by one).
pub fn size() -> Option<u32> {
    first_number(&[
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_SIZE",
        "SLURM_NTASKS",
    ])
}

/// This process's rank on its host (`None`: the launcher does not say).
pub fn local_rank() -> Option<u32> {
    first_number(&[
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "SLURM_LOCALID",
        "PMIX_LOCAL_RANK",
    ])
}

/// The name and version of an MPI library from its version string (`MPI_Get_library_version`):
/// `Open MPI v4.1.4`, `MPICH 4.0.2`.
pub fn library_name(version: &str) -> String {
    let first = version
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .lines()
        .next()
        .unwrap_or("");
    let name = first
        .split(',')
        .next()
        .unwrap_or(first)
        .replace("Version:", "");
    let words: Vec<&str> = name.split_whitespace().collect();
    if words.is_empty() {
        "MPI".into()
    } else {
        words.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::library_name;

    #[test]
    fn library_names_keep_the_name_and_version() {
        assert_eq!(
            library_name(
                "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\0"
            ),
            "Open MPI v4.1.4"
        );
        assert_eq!(
            library_name(
                "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n"
            ),
            "MPICH 4.0.2"
        );
        assert_eq!(library_name("\0"), "MPI");
    }
}
