package hooks

import "github.com/vfslab/vfslab/patch"

// FileOpenPatch is seed 004: fscrypt_file_open, which ext4 and f2fs call on
// every open of a regular file, encrypted or not, used to take a reference
// on the parent dentry (dget_parent + dput: two atomic read-modify-writes
// on the shared directory's lockref per open, serialising opens of
// different files in one directory). The patch checks the parent under
// RCU first and only takes the reference when the parent is encrypted.
// Eric Biggers' review asked for the explanatory comment and for the
// now-redundant IS_ENCRYPTED check after dget_parent to go; the merged
// version (Linux 6.10) is v2.
var FileOpenPatch = patch.Register(&patch.Patch{
	ID:      "fscrypt-file-open",
	Seed:    "004",
	Subject: "[PATCH] fscrypto: try to avoid refing parent dentry in fscrypt_file_open",
	Author:  "Mateusz Guzik <mjguzik@gmail.com>; review by Eric Biggers",
	Date:    "2024-05-07",
	Fate:    "merged as v2 in Linux 6.10 with the review's changes (subject \"fscrypt: ...\", the comment, the redundant IS_ENCRYPTED check dropped)",
	Files:   []string{"fs/crypto/hooks.c"},
	Reported: []string{
		"will-it-scale open1_processes -t 20 (each task opens/closes its own file, all in /tmp), Sapphire Rapids: 12,539,898 -> 25,575,494 ops/s (+103%)",
		"2 atomics per open on the parent's lockref before, 0 after when the parent is not encrypted",
	},
	Variants: []patch.Variant{
		{Name: "base", Summary: "dget_parent(file dentry); IS_ENCRYPTED(parent) && !fscrypt_has_permitted_context -> -EPERM with a warning; dput"},
		{Name: "v1", Summary: "the seed as posted: rcu_read_lock, READ_ONCE(d_parent), d_inode_rcu; return 0 for an existing unencrypted parent; else the old path, IS_ENCRYPTED check kept"},
		{Name: "v2", Summary: "as merged (Linux 6.10): the same RCU fast path, the redundant IS_ENCRYPTED check after dget_parent dropped, the review's comment added"},
	},
})

// FileOpenVariant is a variant of FileOpenPatch, in Variants order.
type FileOpenVariant uint8

// The fscrypt-file-open variants.
const (
	FileOpenBase FileOpenVariant = iota
	FileOpenV1
	FileOpenV2
)

// fileOpen reads the fscrypt-file-open variant of a machine's patch set.
var fileOpen = patch.Bind[FileOpenVariant](FileOpenPatch)
