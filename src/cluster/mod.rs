//! Runs driven from several clients at once: every MPI rank (`mpirun`, `srun`) is one client
//! running the same plan against its own targets, started together on one clock; rank 0
//! merges what they measured exactly ([`crate::stats::merge`]) into one
//! [`RunResult`](crate::result::RunResult)
//! whose [`ClusterResult`](crate::result::ClusterResult) keeps each client's own figures (a
//! summary of a few KB by default) and each host's clients merged.
//!
//! The transport is MPI when iopath is built with the `mpi` feature (the `mpi` module); the merge, the
//! target templates ([`templates`]), the assembled result ([`assemble`]) and what the launcher
//! says ([`launcher`]) are plain code,
//! built and tested without it.

pub mod assemble;
pub mod backoff;
pub mod launcher;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod silence;
pub mod templates;
#[cfg(test)]
mod thousand_ranks;
