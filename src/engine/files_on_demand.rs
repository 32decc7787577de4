//! Files a local engine opens as its requests come to them and closes beyond a bound, as fio
//! does with `openfiles`: a worker moving over 100 000 files then holds at most that many
//! descriptors, not one per file.
//!
//! A file is opened (by the caller's [`OpenFile`]) at the first request that names it; when
//! that makes more files open than the bound, the least recently used one is closed. The
//! bookkeeping per request is one counter written; only an open scans the open files.
//!
//! An engine that keeps requests in flight after it returns (io_uring) holds a file for each
//! of them ([`FilesOnDemand::hold`], [`FilesOnDemand::release`] at its completion): a held file
//! is never closed, and when every open file is held and the bound is reached, no other file
//! can be opened ([`FilesOnDemand::can_open`]) until a request completes — as fio waits for
//! completions before it opens a file beyond `openfiles`.
//!
//! Files may also be mapped ([`FilesOnDemand::mapping_each`], fio's `mmap` engine): each file
//! is mapped when it is opened and unmapped when it is closed, so a worker holds at most the
//! bound of mappings too, not one per file (a process may hold about 65 000 mappings:
//! `vm.max_map_count`).
//!
//! ```
//! use iopath::engine::files_on_demand::FilesOnDemand;
//! let directory = std::env::temp_dir().join(format!("iopath-on-demand-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&directory).unwrap();
//! let paths: Vec<_> = (0..3).map(|n| directory.join(format!("f{n}"))).collect();
//! for path in &paths {
//!     std::fs::write(path, [0u8; 512]).unwrap();
//! }
//! let opener = paths.clone();
//! let mut files = FilesOnDemand::new(3, 2, Box::new(move |file| std::fs::File::open(&opener[file as usize])));
//! for file in [0, 1, 2, 0] {
//!     files.get(file).unwrap();
//! }
//! assert_eq!(files.open_count(), 2);
//! assert_eq!(files.opens(), 4, "file 0 was closed for file 2, and opened again");
//! std::fs::remove_dir_all(&directory).unwrap();
//! ```

use super::data_path::FileMapping;
use std::fs::File;
use std::io;

/// Opens file `index` of an engine's files, with the flags its requests need.
pub type OpenFile = Box<dyn FnMut(u32) -> io::Result<File> + Send>;

/// See the module documentation.
pub struct FilesOnDemand {
    /// Per file: its descriptor while open.
    files: Vec<Option<File>>,
    /// Per file: its mapping while open, when files are mapped (empty otherwise).
    mappings: Vec<Option<FileMapping>>,
    /// Per file: the request count at its last use.
    last_used: Vec<u64>,
    /// Per file: written since it was opened (synced before it is closed, when asked).
    written: Vec<bool>,
    /// Per file: requests in flight on it (it is not closed while any is).
    held: Vec<u32>,
    /// The files open now (unordered).
    open: Vec<u32>,
    /// Most files open at once (at least 1).
    bound: usize,
    uses: u64,
    opens: u64,
    opener: OpenFile,
    /// Make a written file's data durable before closing it (fio's `end_fsync` over files
    /// that are closed before the end).
    sync_before_close: bool,
}

impl FilesOnDemand {
    /// `count` files, at most `bound` of them open at once, each opened by `opener`.
    pub fn new(count: usize, bound: usize, opener: OpenFile) -> Self {
        let bound = bound.clamp(1, count.max(1));
        FilesOnDemand {
            files: (0..count).map(|_| None).collect(),
            mappings: Vec::new(),
            last_used: vec![0; count],
            written: vec![false; count],
            held: vec![0; count],
            open: Vec::with_capacity(bound + 1),
            bound,
            uses: 0,
            opens: 0,
            opener,
            sync_before_close: false,
        }
    }

    /// The same, making a written file's data durable (fdatasync) before it is closed.
    pub fn syncing_before_close(mut self) -> Self {
        self.sync_before_close = true;
        self
    }

    /// The same, each file mapped shared when it is opened and unmapped when it is closed
    /// ([`FileMapping`]: a file must not be empty); its mapping is
    /// [`FilesOnDemand::get_mapped`].
    pub fn mapping_each(mut self) -> Self {
        self.mappings = (0..self.files.len()).map(|_| None).collect();
        self
    }

    /// Whether each file is mapped when it is opened.
    pub fn maps_files(&self) -> bool {
        !self.mappings.is_empty()
    }

    /// How many files there are.
    pub fn count(&self) -> usize {
        self.files.len()
    }

    /// File `file`, opened now when it is not open (closing the least recently used beyond the
    /// bound first).
    #[inline]
    pub fn get(&mut self, file: u32) -> io::Result<&File> {
        let index = file as usize;
        if index >= self.files.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "file is not one of the engine's",
            ));
        }
        self.uses += 1;
        self.last_used[index] = self.uses;
        if self.files[index].is_none() {
            self.open_file(file)?;
        }
        Ok(self.files[index].as_ref().expect("opened above"))
    }

    /// The mapping of file `file`, opened and mapped now when it is not open (as
    /// [`FilesOnDemand::get`]); `InvalidInput` when files are not mapped.
    #[inline]
    pub fn get_mapped(&mut self, file: u32) -> io::Result<&mut FileMapping> {
        self.get(file)?;
        self.mappings
            .get_mut(file as usize)
            .and_then(Option::as_mut)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "files are not mapped"))
    }

    /// Notes that `file` is written (before or after the [`FilesOnDemand::get`] of the write).
    #[inline]
    pub fn mark_written(&mut self, file: u32) {
        if let Some(written) = self.written.get_mut(file as usize) {
            *written = true;
        }
    }

    /// Whether [`FilesOnDemand::get`] of `file` can succeed without closing a held file: it is
    /// open, the bound is not reached, or an open file has nothing in flight.
    #[inline]
    pub fn can_open(&self, file: u32) -> bool {
        let open = self
            .files
            .get(file as usize)
            .is_some_and(|found| found.is_some());
        open || self.open.len() < self.bound
            || self.open.iter().any(|&open| self.held[open as usize] == 0)
    }

    /// Notes a request in flight on `file` (open: got by [`FilesOnDemand::get`]): it stays
    /// open until [`FilesOnDemand::release`].
    #[inline]
    pub fn hold(&mut self, file: u32) {
        if let Some(held) = self.held.get_mut(file as usize) {
            *held += 1;
        }
    }

    /// Notes that a request held on `file` is complete.
    #[inline]
    pub fn release(&mut self, file: u32) {
        if let Some(held) = self.held.get_mut(file as usize) {
            *held = held.saturating_sub(1);
        }
    }

    /// Opens `file`, making room first; `WouldBlock` when the bound is reached and every
    /// open file is held.
    #[cold]
    fn open_file(&mut self, file: u32) -> io::Result<()> {
        if self.open.len() >= self.bound && !self.close_least_recently_used()? {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "every open file has requests in flight",
            ));
        }
        let opened = (self.opener)(file)?;
        if let Some(mapping) = self.mappings.get_mut(file as usize) {
            *mapping = Some(FileMapping::new(&opened)?);
        }
        self.opens += 1;
        self.files[file as usize] = Some(opened);
        self.open.push(file);
        Ok(())
    }

    /// Closes the open file with nothing in flight used longest ago; false when every open
    /// file is held.
    fn close_least_recently_used(&mut self) -> io::Result<bool> {
        let Some((position, _)) = self
            .open
            .iter()
            .enumerate()
            .filter(|&(_, &file)| self.held[file as usize] == 0)
            .min_by_key(|&(_, &file)| self.last_used[file as usize])
        else {
            return Ok(false);
        };
        let file = self.open.swap_remove(position) as usize;
        let written = std::mem::take(&mut self.written[file]);
        // The mapping goes before its descriptor, its dirty pages written back first when
        // asked (an unmapped page stays dirty in the page cache, as after a write).
        if let Some(mapping) = self.mappings.get_mut(file).and_then(Option::take)
            && self.sync_before_close
            && written
        {
            mapping.sync()?;
        }
        if let Some(closed) = self.files[file].take()
            && self.sync_before_close
            && written
        {
            closed.sync_data()?;
        }
        Ok(true)
    }

    /// File `file` when it is open now (opening nothing).
    pub fn opened(&self, file: u32) -> Option<&File> {
        self.files.get(file as usize).and_then(Option::as_ref)
    }

    /// The files open now.
    pub fn open_files(&self) -> impl Iterator<Item = &File> {
        self.open
            .iter()
            .filter_map(|&file| self.files[file as usize].as_ref())
    }

    /// The mappings of the files open now (none when files are not mapped).
    pub fn open_mappings(&self) -> impl Iterator<Item = &FileMapping> {
        self.open
            .iter()
            .filter_map(|&file| self.mappings.get(file as usize)?.as_ref())
    }

    /// How many files are open now.
    pub fn open_count(&self) -> usize {
        self.open.len()
    }

    /// How many opens there were so far.
    pub fn opens(&self) -> u64 {
        self.opens
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// `count` files of 4 KiB in a new directory, and an opener that counts its opens.
    fn files(count: usize) -> (tempfile::TempDir, OpenFile, Arc<AtomicUsize>) {
        let directory = tempfile::tempdir().unwrap();
        let paths: Vec<_> = (0..count)
            .map(|n| {
                let path = directory.path().join(format!("f{n}"));
                std::fs::write(&path, [n as u8; 4096]).unwrap();
                path
            })
            .collect();
        let opened = Arc::new(AtomicUsize::new(0));
        let counter = opened.clone();
        let opener: OpenFile = Box::new(move |file| {
            counter.fetch_add(1, Ordering::Relaxed);
            File::open(&paths[file as usize])
        });
        (directory, opener, opened)
    }

    #[test]
    fn never_more_open_than_the_bound_and_each_request_reaches_its_own_file() {
        use std::os::unix::fs::FileExt;
        let (_directory, opener, opened) = files(10);
        let mut on_demand = FilesOnDemand::new(10, 3, opener);
        let mut byte = [0u8; 1];
        for round in 0..4 {
            for file in 0..10u32 {
                on_demand.get(file).unwrap().read_at(&mut byte, 0).unwrap();
                assert_eq!(byte[0], file as u8, "round {round}");
                assert!(on_demand.open_count() <= 3);
            }
        }
        // Round robin over more files than the bound reopens each at every turn.
        assert_eq!(opened.load(Ordering::Relaxed), 40);
        assert_eq!(on_demand.open_files().count(), 3);
    }

    #[test]
    fn files_within_the_bound_are_opened_once() {
        let (_directory, opener, opened) = files(10);
        let mut on_demand = FilesOnDemand::new(10, 4, opener);
        for _ in 0..100 {
            for file in [2, 5, 7, 9] {
                on_demand.get(file).unwrap();
            }
        }
        assert_eq!(opened.load(Ordering::Relaxed), 4);
        // The least recently used goes, not the one just used.
        on_demand.get(0).unwrap();
        on_demand.get(9).unwrap();
        assert_eq!(
            opened.load(Ordering::Relaxed),
            5,
            "file 2 was closed for 0, not 9"
        );
        assert!(on_demand.get(10).is_err());
    }

    #[test]
    fn mapped_files_are_mapped_with_their_descriptor_and_unmapped_with_it() {
        let (_directory, opener, opened) = files(5);
        let mut on_demand = FilesOnDemand::new(5, 2, opener).mapping_each();
        assert!(on_demand.maps_files());
        let mut byte = [0u8; 1];
        for round in 0..3 {
            for file in 0..5u32 {
                assert_eq!(on_demand.get_mapped(file).unwrap().read(&mut byte, 4095), 1);
                assert_eq!(byte[0], file as u8, "round {round}");
                assert!(on_demand.open_mappings().count() <= 2);
            }
        }
        assert_eq!(opened.load(Ordering::Relaxed), 15);
        assert_eq!(on_demand.open_mappings().count(), 2);
        let (_directory, opener, _) = files(2);
        let mut unmapped = FilesOnDemand::new(2, 1, opener);
        assert_eq!(
            unmapped.get_mapped(0).err().map(|error| error.kind()),
            Some(io::ErrorKind::InvalidInput)
        );
        assert_eq!(unmapped.open_mappings().count(), 0);
    }

    #[test]
    fn a_held_file_stays_open_and_a_full_bound_of_held_files_opens_none() {
        let (_directory, opener, opened) = files(4);
        let mut on_demand = FilesOnDemand::new(4, 2, opener);
        on_demand.get(0).unwrap();
        on_demand.hold(0);
        on_demand.get(1).unwrap();
        // File 0 is the least recently used, but held: file 1 makes room for file 2.
        assert!(on_demand.can_open(2));
        on_demand.get(2).unwrap();
        on_demand.hold(2);
        assert_eq!(opened.load(Ordering::Relaxed), 3);
        assert!(on_demand.can_open(0) && on_demand.can_open(2));
        assert!(!on_demand.can_open(3));
        let refused = on_demand.get(3).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(on_demand.open_count(), 2);
        on_demand.release(0);
        assert!(on_demand.can_open(3));
        on_demand.get(3).unwrap();
        assert_eq!(on_demand.open_count(), 2, "file 0 was closed for file 3");
        on_demand.get(2).unwrap();
        assert_eq!(opened.load(Ordering::Relaxed), 4, "file 2 stayed open");
    }
}
