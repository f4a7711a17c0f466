package quiz

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/teach"
	"github.com/vfslab/vfslab/vfs"
)

var words = []string{"alpha", "bravo", "notes", "report", "kernel", "dentry", "inode", "lockref", "bucket", "htree", "cipher", "README", "Makefile", "photo", "todo"}

func randomName(rng *rand.Rand) string {
	return fmt.Sprintf("%s%d.txt", pick(rng, words), rng.IntN(100))
}

// F2fsPlace is where __f2fs_find_entry looks for a name in one level of
// a directory with i_dir_level dirLevel: f2fs_dentry_hash's hash_code,
// dir_buckets, the bucket (hash % buckets) and the bucket's blocks
// (dir_block_index, bucket_blocks). It uses f2fs's exported hash and
// geometry.
type F2fsPlace struct {
	Hash            uint32
	Level, DirLevel uint32
	Buckets, Bucket uint64
	Block, NrBlocks uint64
}

// PlaceF2fs computes the F2fsPlace of name (TEA, not casefolded, not
// encrypted) in level.
func PlaceF2fs(name string, level, dirLevel uint32) F2fsPlace {
	h := f2fs.F2fsDentryHash([]byte(name))
	nb := f2fs.DirBuckets(level, dirLevel)
	b := uint64(h) % nb
	return F2fsPlace{Hash: h, Level: level, DirLevel: dirLevel, Buckets: nb, Bucket: b,
		Block: f2fs.DirBlockIndex(level, dirLevel, b), NrBlocks: f2fs.BucketBlocks(level)}
}

func (p F2fsPlace) String() string {
	return fmt.Sprintf("hash_code %#08x; level %d has %d bucket(s); bucket %d = %#x %% %d; its blocks are %d..%d of the directory",
		p.Hash, p.Level, p.Buckets, p.Bucket, p.Hash, p.Buckets, p.Block, p.Block+p.NrBlocks-1)
}

// Ext4QuizSeed is the s_hash_seed of the quiz's ext4 questions.
var Ext4QuizSeed = func() [16]byte {
	var s [16]byte
	copy(s[:], bare.PlaintextStream("vfslab quiz s_hash_seed", 16))
	return s
}()

// Ext4Leaves are the hash ranges of the quiz's htree: a root with four
// leaves splitting the hash space evenly. They are drawn from the hash,
// not read from a live directory.
var Ext4Leaves = []uint32{0, 0x40000000, 0x80000000, 0xc0000000}

// PlaceExt4 is the half_md4 hash of name with Ext4QuizSeed and the leaf
// dx_probe picks: the last index entry whose hash is <= the name's.
func PlaceExt4(name string) (hash, minor uint32, leaf int, err error) {
	w := ext4.HashSeedWords(&Ext4QuizSeed)
	h := ext4.DxHashInfo{HashVersion: ext4.DxHashHalfMD4, Seed: &w}
	if err := ext4.Ext4fsDirhash([]byte(name), &h, nil); err != nil {
		return 0, 0, 0, err
	}
	for i, lo := range Ext4Leaves {
		if h.Hash >= lo {
			leaf = i
		}
	}
	return h.Hash, h.MinorHash, leaf, nil
}

func ext4LeafRange(i int) string {
	hi := uint64(1) << 32
	if i+1 < len(Ext4Leaves) {
		hi = uint64(Ext4Leaves[i+1])
	}
	return fmt.Sprintf("[%#08x, %#x)", Ext4Leaves[i], hi)
}

func genHash(rng *rand.Rand, reverse bool) (*question, error) {
	if rng.IntN(2) == 0 {
		level := uint32(rng.IntN(4))
		if reverse {
			level += 2 // at least 4 buckets to choose from
		}
		name := randomName(rng)
		setup := fmt.Sprintf("An f2fs directory, not casefolded nor encrypted, i_dir_level 0, current_depth %d: __f2fs_find_entry reads one bucket per level, level 0 first, until it finds the name.", level+1)
		if !reverse {
			p := PlaceF2fs(name, level, 0)
			return &question{setup: setup,
				ask:     fmt.Sprintf("Which hash, bucket and blocks does %q go to in level %d?", name, level),
				answer:  p.String(),
				explain: "f2fs_dentry_hash (TEA); dir_buckets(level, 0) = 1 << level; bucket_blocks = 2 below level 31"}, nil
		}
		opts := []string{name, randomName(rng), randomName(rng), randomName(rng)}
		want := PlaceF2fs(opts[0], level, 0)
		rng.Shuffle(len(opts), func(i, j int) { opts[i], opts[j] = opts[j], opts[i] })
		var ans, ex []string
		for i, o := range opts {
			p := PlaceF2fs(o, level, 0)
			if p.Bucket == want.Bucket {
				ans = append(ans, fmt.Sprintf("(%c) %s", letters[i], o))
			}
			ex = append(ex, fmt.Sprintf("(%c) %q: %s", letters[i], o, p))
		}
		return &question{setup: setup,
			ask:     fmt.Sprintf("Which of these names land in bucket %d of level %d?%s", want.Bucket, level, choices(opts)),
			answer:  strings.Join(ans, ", "),
			explain: strings.Join(ex, "\n")}, nil
	}
	setup := fmt.Sprintf("An ext4 directory with an htree (hash version half_md4, s_hash_seed %x): its root's four index entries split the hash space evenly, leaves 0..3 (drawn from the hash, not a live htree).", Ext4QuizSeed)
	if !reverse {
		name := randomName(rng)
		h, mi, leaf, err := PlaceExt4(name)
		if err != nil {
			return nil, err
		}
		return &question{setup: setup,
			ask:     fmt.Sprintf("In which leaf does dx_probe look for %q? (its hash's top two bits decide)", name),
			answer:  fmt.Sprintf("leaf %d %s: hash %08x, minor %08x", leaf, ext4LeafRange(leaf), h, mi),
			explain: fmt.Sprintf("vfslab hash ext4 --version half_md4 --seed %x %x", Ext4QuizSeed, name)}, nil
	}
	var opts, ans, ex []string
	for len(opts) < 4 {
		opts = append(opts, randomName(rng))
	}
	// The leaf of one of the names, so that at least one answer is right.
	_, _, leaf, err := PlaceExt4(opts[rng.IntN(len(opts))])
	if err != nil {
		return nil, err
	}
	for i, o := range opts {
		h, _, l, err := PlaceExt4(o)
		if err != nil {
			return nil, err
		}
		if l == leaf {
			ans = append(ans, fmt.Sprintf("(%c) %s", letters[i], o))
		}
		ex = append(ex, fmt.Sprintf("(%c) %q: hash %08x, leaf %d", letters[i], o, h, l))
	}
	return &question{setup: setup,
		ask:     fmt.Sprintf("Which of these names does dx_probe look for in leaf %d %s?%s", leaf, ext4LeafRange(leaf), choices(opts)),
		answer:  strings.Join(ans, ", "),
		explain: strings.Join(ex, "\n")}, nil
}

// nokeyLengths are plaintext name lengths that cross the padding and
// digest boundaries of no-key names.
var nokeyLengths = []int{1, 4, 16, 31, 32, 33, 64, 100, 149, 150, 200, 255}

// nokeyListing makes files of the given name lengths in /secret, removes
// the key and lists /secret: the no-key names' lengths and decoded sizes,
// sorted (their order and bytes depend on the random nonce).
func nokeyListing(fs string, lens []int) (setup, listing string, err error) {
	m, err := teach.NewMachine(teach.Config{FS: fs})
	if err != nil {
		return "", "", err
	}
	defer m.Close()
	var made []string
	for i, n := range lens {
		name := strings.Repeat(string(rune('a'+i)), n)
		if err := m.WriteFile("/secret/"+name, "x"); err != nil {
			return "", "", fmt.Errorf("create a %d-byte name: %w", n, err)
		}
		made = append(made, fmt.Sprintf("%d", n))
	}
	if err := m.RemoveKey(); err != nil {
		return "", "", err
	}
	names, err := teach.ReadDir(m.T, m.P, "/secret")
	if err != nil {
		return "", "", err
	}
	type row struct{ enc, ct int }
	var rows []row
	for _, nm := range names {
		nk, err := fscrypt.DecodeNokeyName([]byte(nm))
		if err != nil {
			return "", "", fmt.Errorf("decode %q: %w", nm, err)
		}
		ct := len(nk.Bytes)
		if nk.Digested {
			ct = -1
		}
		rows = append(rows, row{len(nm), ct})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].enc < rows[j].enc })
	var parts []string
	for _, r := range rows {
		if r.ct < 0 {
			parts = append(parts, fmt.Sprintf("%d chars (8 bytes dirhash + first 149 ciphertext bytes + SHA-256 of the rest)", r.enc))
		} else {
			parts = append(parts, fmt.Sprintf("%d chars (8 bytes dirhash + %d ciphertext bytes)", r.enc, r.ct))
		}
	}
	setup = fmt.Sprintf("Machine: %s; in /secret (v2 policy, filenames AES-256-CTS, padding 32) the files note and names of %s bytes; then the key is removed.", fs, strings.Join(made, ", "))
	return setup, fmt.Sprintf("%d entries besides . and ..: %s", len(names), strings.Join(parts, "; ")), nil
}

func genNokey(rng *rand.Rand, reverse bool) (*question, error) {
	fs := pick(rng, fsNames)
	k := 1 + rng.IntN(2)
	var lens []int
	for _, i := range rng.Perm(len(nokeyLengths))[:k] {
		lens = append(lens, nokeyLengths[i])
	}
	sort.Ints(lens)
	setup, listing, err := nokeyListing(fs, lens)
	if err != nil {
		return nil, err
	}
	explain := "fscrypt_fname_disk_to_usr without the key: base64url (no padding) of struct fscrypt_nokey_name " +
		"{dirhash[2], bytes[149], sha256[32]}; ciphertext = max(len, 16) rounded up to the policy's padding (32), at most 255; " +
		"the bytes themselves change with each run's random nonce, so only lengths are asked"
	if !reverse {
		return &question{setup: setup,
			ask:     "What does getdents64 on /secret show: how many names, how long, and what do they hold?",
			answer:  listing,
			explain: explain}, nil
	}
	// Reverse: given the listing, which set of lengths made it?
	cands := [][]int{lens}
	for len(cands) < 3 {
		var other []int
		for _, i := range rng.Perm(len(nokeyLengths))[:k] {
			other = append(other, nokeyLengths[i])
		}
		sort.Ints(other)
		cands = append(cands, other)
	}
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	var opts, ans, ex []string
	for i, c := range cands {
		_, l, err := nokeyListing(fs, c)
		if err != nil {
			return nil, err
		}
		opts = append(opts, fmt.Sprintf("note and names of %v bytes", c))
		if l == listing {
			ans = append(ans, fmt.Sprintf("(%c)", letters[i]))
		}
		ex = append(ex, fmt.Sprintf("(%c) %s", letters[i], l))
	}
	return &question{setup: fmt.Sprintf("Machine: %s; /secret encrypted (v2, AES-256-CTS, padding 32); files made, then the key removed.", fs),
		ask:     fmt.Sprintf("getdents64 on /secret shows %s. Which files were made?%s", listing, choices(opts)),
		answer:  strings.Join(ans, ", ") + " (a name's length shows only its padded ciphertext size)",
		explain: strings.Join(ex, "\n") + "\n" + explain}, nil
}

// kmallocVariants are seed 001's variants.
var kmallocVariants = []string{"base", "v2", "v4"}

// kmallocRun makes a casefolded, encrypted /w on f2fs with n files
// (file-00...), drops the caches and stats target under variant; it
// returns the kmallocs and what else the lookup counted.
func kmallocRun(variant string, n int, target string) (summary string, kmallocs uint64, log []string, err error) {
	set, err := patch.Parse("f2fs-lookup-prealloc=" + variant)
	if err != nil {
		return "", 0, nil, err
	}
	m, err := teach.NewMachine(teach.Config{FS: "f2fs", Patches: set, Features: vfs.Features{Casefold: true}})
	if err != nil {
		return "", 0, nil, err
	}
	defer m.Close()
	t, p := m.T, m.P
	// Seed 001's kernel (6.16) had no lookup_mode= and fell back to the
	// linear search after a hashed miss, as lookup_mode=auto does;
	// upstream's default, perf, never falls back.
	if err := m.Sys.Remount(t, p, "/", "lookup_mode=auto"); err != nil {
		return "", 0, nil, err
	}
	if err := p.Mkdir(t, "/w", 0o755); err != nil {
		return "", 0, nil, err
	}
	fd, err := p.Open(t, "/w", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return "", 0, nil, err
	}
	fl := uint32(vfs.FS_CASEFOLD_FL)
	_, err = p.Ioctl(t, fd, uint32(vfs.FS_IOC_SETFLAGS), &fl)
	p.Close(t, fd)
	if err != nil {
		return "", 0, nil, fmt.Errorf("casefold /w: %w", err)
	}
	if _, err := p.EncryptDir(t, "/w", teach.MasterKey(), 0, 0); err != nil {
		return "", 0, nil, err
	}
	for i := 0; i < n; i++ {
		if err := m.WriteFile(fmt.Sprintf("/w/file-%02d", i), "x"); err != nil {
			return "", 0, nil, err
		}
	}
	m.DropCaches()
	r := m.Record(teach.Stat(target))
	ev := r.Events.Map()
	res := resultOf(r)
	summary = fmt.Sprintf("stat = %s; kmalloc=%d kfree=%d f2fs_names_compared=%d f2fs_name_decrypts=%d f2fs_linear_fallback=%d",
		res, ev["kmalloc"], ev["kfree"], ev["f2fs_names_compared"], ev["f2fs_name_decrypts"], ev["f2fs_linear_fallback"])
	return summary, ev["kmalloc"], r.Log, nil
}

func genKmalloc(rng *rand.Rand, reverse bool) (*question, error) {
	n := pick(rng, []int{3, 6, 10})
	var target, what string
	if rng.IntN(2) == 0 {
		target = fmt.Sprintf("/w/FILE-%02d", rng.IntN(n))
		what = "a hit in another case"
	} else {
		target = "/w/missing"
		what = "a miss"
	}
	variant := pick(rng, kmallocVariants)
	setup := fmt.Sprintf("Machine: f2fs with casefold, mounted lookup_mode=auto (seed 001's 6.16 kernel: a hashed miss falls back to the linear search); /w casefolded and encrypted (key present) holding file-00..file-%02d; drop_caches.", n-1)
	summary, km, log, err := kmallocRun(variant, n, target)
	if err != nil {
		return nil, err
	}
	explain := "kmem counters of the calling task during stat(2)"
	for _, l := range log {
		explain += "\ndmesg: " + l
	}
	if !reverse {
		return &question{setup: setup + "\nPatch: f2fs-lookup-prealloc=" + variant,
			ask:     fmt.Sprintf("stat(%q) (%s). How many kmallocs does it make, and how many names does the lookup compare?", target, what),
			answer:  summary,
			explain: explain}, nil
	}
	var same, ex []string
	for _, v := range kmallocVariants {
		s, k, _, err := kmallocRun(v, n, target)
		if err != nil {
			return nil, err
		}
		if k == km {
			same = append(same, v)
		}
		ex = append(ex, v+": "+s)
	}
	return &question{setup: setup,
		ask:     fmt.Sprintf("stat(%q) (%s) made %d kmallocs. Under which f2fs-lookup-prealloc variants (base, v2, v4)?", target, what, km),
		answer:  strings.Join(same, ", "),
		explain: strings.Join(ex, "\n")}, nil
}
