package shell

// coreutils are the GNU coreutils the scenarios use, with their options,
// messages and exit statuses.
var coreutils = map[string]func(c *cmd) int{
	"ls": cmdLs, "cat": cmdCat, "mkdir": cmdMkdir, "rmdir": cmdRmdir, "rm": cmdRm,
	"mv": cmdMv, "ln": cmdLn, "touch": cmdTouch, "stat": cmdStat, "readlink": cmdReadlink,
	"truncate": cmdTruncate, "head": cmdHead, "tail": cmdTail, "cp": cmdCp, "dd": cmdDd,
	"md5sum": cmdMd5sum, "sha256sum": cmdSha256sum, "wc": cmdWc, "yes": cmdYes, "diff": cmdDiff,
	"sort": cmdSort, "uniq": cmdUniq, "tr": cmdTr, "cut": cmdCut, "seq": cmdSeq,
	"grep": cmdGrep, "egrep": cmdEgrep, "sed": cmdSed, "awk": cmdAwk, "od": cmdOd,
	"chattr": cmdChattr, "lsattr": cmdLsattr, "tee": cmdTee, "xxd": cmdXxd, "find": cmdFind, "cmp": cmdCmp,
	"echo": cmdEcho, "true": func(*cmd) int { return 0 }, "false": func(*cmd) int { return 1 },
}

// toolCommands are xfs_io, fscryptctl, keyctl, mkfs, mount and umount.
var toolCommands = map[string]func(c *cmd) int{
	"xfs_io": cmdXfsIo, "fscryptctl": cmdFscryptctl, "keyctl": cmdKeyctl,
	"mkfs": cmdMkfs, "mkfs.ext4": cmdMkfs, "mkfs.f2fs": cmdMkfs,
	"mount": cmdMount, "umount": cmdUmount, "blkid": cmdBlkid,
	"trace": cmdTrace, "events": cmdEvents, "patches": cmdPatches, "dump": cmdDump,
	"help": cmdHelp,
}
