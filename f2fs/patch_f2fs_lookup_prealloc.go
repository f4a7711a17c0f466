package f2fs

import "github.com/vfslab/vfslab/patch"

// LookupPreallocPatch is seed 001, "f2fs: improve the performance of
// f2fs_lookup": a decrypted_name_prealloc buffer threaded through
// __f2fs_find_entry -> find_in_level -> find_in_block ->
// f2fs_find_target_dentry -> f2fs_match_name -> generic_ci_match, so that
// comparing the dentries of a casefolded, encrypted directory does not
// kmalloc and kfree a decryption buffer per dentry.
//
// The variants change how vfs.GenericCIMatch (generic_ci_match, fs/libfs.c)
// gets its buffer, through FindEntryFname (dir.go):
//   - base: kmalloc(de_name_len) and kfree per compared dentry.
//   - v2: the patch as posted. Its resize helper keeps the old buffer when
//     wantlen >= namelen, which is inverted: a longer on-disk name than the
//     buffer holds is decrypted into the too-small buffer (an out-of-bounds
//     write the allocator model reports as KASAN slab-out-of-bounds), and a
//     shorter one reallocates, so allocations are not reduced.
//   - v4: the condition fixed to wantlen <= namelen: one allocation of
//     wantlen + 64 bytes per lookup, grown when a longer name comes.
//
// Neither variant touches generic_ci_match's error path, which kfrees the
// buffer when decryption fails: with a prealloc buffer that frees it behind
// the struct's back (a use-after-free on reuse, a double free at the end).
// Under fault injection that is what both do when the decryption's own
// allocation fails (TestSeed001FaultInjection); a failed resize kmalloc is
// clean.
//
// The cost the patch cuts is the linear fallback's: the seed's 6.16 kernel
// falls back after every hashed miss in a casefolded directory, as
// lookup_mode=auto does; upstream's default since the option was added,
// lookup_mode=perf, never falls back, and the three variants then do the
// same work.
var LookupPreallocPatch = patch.Register(&patch.Patch{
	ID:      "f2fs-lookup-prealloc",
	Seed:    "001",
	Subject: "[PATCH v2] f2fs: improve the performance of f2fs_lookup",
	Author:  "Yuwen Chen",
	Date:    "2025-07-03",
	Fate:    "not merged; v4 silently fixed the inverted size check; the root cause was fixed by the f2fs lookup_mode= mount option (perf = hash-only, no linear fallback)",
	Files:   []string{"fs/ext4/namei.c", "fs/f2fs/dir.c", "fs/f2fs/f2fs.h", "fs/f2fs/inline.c", "fs/libfs.c", "include/linux/fs.h"},
	Reported: []string{
		"2000 creates of 4 KiB files in an encrypted, casefolded f2fs directory (Snapdragon 8s Gen4, v6.16 userdebug): 14.83/15.61/14.72 s -> 8.17/8.16/8.15 s",
	},
	Variants: []patch.Variant{
		{Name: "base", Summary: "generic_ci_match kmallocs a de_name_len buffer per compared dentry and kfrees it"},
		{Name: "v2", Summary: "the seed as posted: decrypted_name_prealloc threaded through the lookup, resize keeps the buffer when wantlen >= namelen (inverted), size wantlen + 64, freed at the end of __f2fs_find_entry"},
		{Name: "v4", Summary: "as v2 with the resize condition fixed to wantlen <= namelen: one buffer per lookup"},
	},
})

// LookupPreallocVariant is a variant of LookupPreallocPatch, in Variants order.
type LookupPreallocVariant uint8

// The f2fs-lookup-prealloc variants.
const (
	LookupPreallocBase LookupPreallocVariant = iota
	LookupPreallocV2
	LookupPreallocV4
)

// lookupPrealloc reads the f2fs-lookup-prealloc variant of a machine's
// patch set.
var lookupPrealloc = patch.Bind[LookupPreallocVariant](LookupPreallocPatch)
