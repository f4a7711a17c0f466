package draw

import (
	"fmt"
	"sort"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/teach"
	"github.com/vfslab/vfslab/vfs"
)

// liveKey is one inode whose fscrypt_inode_info is set up.
type liveKey struct {
	path      string
	ino       uint64
	dir       bool
	casefold  bool
	mode      *fscrypt.Mode
	policy    fscrypt.Policy
	keyLoaded bool
}

// collectKeys walks the paths below root on m and returns the inodes
// whose keys are set up (inode->i_crypt_info), and the ones that are
// encrypted but have none (evicted, or the key removed).
func collectKeys(m *teach.Machine, root string) ([]liveKey, error) {
	var out []liveKey
	var walk func(path string) error
	walk = func(path string) error {
		d, err := m.P.LookupDentry(m.T, path, false)
		if err != nil {
			return err
		}
		ino := d.Inode()
		isDir := d.IsDir()
		lk := liveKey{path: path, dir: isDir}
		if ino != nil {
			lk.ino = ino.Ino()
			lk.casefold = ino.IsCasefolded()
			if ci := ino.CryptInfo(); ci != nil {
				lk.keyLoaded, lk.mode, lk.policy = true, ci.Mode(), ci.Policy()
			}
		}
		putDentry(m, d)
		out = append(out, lk)
		if !isDir {
			return nil
		}
		names, err := teach.ReadDir(m.T, m.P, path)
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, n := range names {
			if err := walk(path + "/" + n); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root)
}

// hkdfContexts are fs/crypto/fscrypt_private.h's HKDF_CONTEXT_* in order,
// with what each derives and the info bytes it takes.
var hkdfContexts = []struct {
	num          int
	name, info   string
	derives      string
	policyFlag   uint8 // the policy flag that selects it (0: always/by kind)
	onlyCasefold bool
}{
	{fscrypt.HKDFContextKeyIdentifier, "HKDF_CONTEXT_KEY_IDENTIFIER", "no info", "the key identifier (16 bytes)", 0, false},
	{fscrypt.HKDFContextPerFileEncKey, "HKDF_CONTEXT_PER_FILE_ENC_KEY", "info: the inode's nonce", "per-file keys (default policies)", 0, false},
	{fscrypt.HKDFContextDirectKey, "HKDF_CONTEXT_DIRECT_KEY", "info: mode_num", "per-mode keys (DIRECT_KEY)", fscrypt.PolicyFlagDirectKey, false},
	{fscrypt.HKDFContextIVInoLblk64Key, "HKDF_CONTEXT_IV_INO_LBLK_64_KEY", "info: mode_num || fs_uuid", "per-mode keys (IV_INO_LBLK_64)", fscrypt.PolicyFlagIVInoLblk64, false},
	{fscrypt.HKDFContextDirhashKey, "HKDF_CONTEXT_DIRHASH_KEY", "info: the directory's nonce", "SipHash keys of casefolded directories", 0, true},
	{fscrypt.HKDFContextIVInoLblk32Key, "HKDF_CONTEXT_IV_INO_LBLK_32_KEY", "info: mode_num || fs_uuid", "per-mode keys (IV_INO_LBLK_32)", fscrypt.PolicyFlagIVInoLblk32, false},
	{fscrypt.HKDFContextInodeHashKey, "HKDF_CONTEXT_INODE_HASH_KEY", "no info", "the inode number hash key (IV_INO_LBLK_32)", fscrypt.PolicyFlagIVInoLblk32, false},
}

// drawKeys draws the v2 key hierarchy of the machine's master key: the
// master key in the filesystem's keyring, HKDF-SHA512, each HKDF context
// and the keys derived from it for the inodes whose keys are set up now.
func drawKeys(m *teach.Machine, keys []liveKey, title string, notes []string) string {
	c := &canvas{}
	c.text(20, 28, "start", 18, "bold", colInk, title)
	for i, n := range notes {
		c.text(20, 48+i*16, "start", 12, "normal", colMuted, n)
	}
	top := 70 + 16*len(notes)
	// Master key and HKDF.
	c.box("master-key", 20, top, 260, 70, colKey, colInk, false)
	c.text(150, top+20, "middle", 13, "bold", colInk, "master key (v2, 64 bytes)")
	c.text(150, top+38, "middle", 10, "normal", colInk, fmt.Sprintf("identifier %x", m.KeyID[:8]))
	c.text(150, top+54, "middle", 10, "normal", colMuted, "in the filesystem's keyring (s_master_keys)")
	hy := top + 110
	c.box("hkdf", 20, hy, 260, 50, colStage, colInk, false)
	c.text(150, hy+20, "middle", 13, "bold", colInk, "HKDF-SHA512 (fscrypt_init_hkdf)")
	c.text(150, hy+38, "middle", 10, "normal", colMuted, "extract once; expand(\"fscrypt\\0\" || context || info)")
	c.arrow("derive", 150, top+70, 150, hy, "#555555", false)

	var flags uint8
	var anyCasefold bool
	for _, k := range keys {
		if k.keyLoaded {
			flags |= k.policy.Flags
			if k.dir && k.casefold {
				anyCasefold = true
			}
		}
	}
	// The contexts, one row each, and the keys they derive.
	cx, cy := 340, top
	for i, h := range hkdfContexts {
		y := cy + i*80
		used := true
		switch {
		case h.policyFlag != 0:
			used = flags&h.policyFlag != 0
		case h.onlyCasefold:
			used = anyCasefold
		case h.num == fscrypt.HKDFContextPerFileEncKey:
			used = flags&(fscrypt.PolicyFlagDirectKey|fscrypt.PolicyFlagIVInoLblk64|fscrypt.PolicyFlagIVInoLblk32) == 0
		}
		fill, ink := colStage, colInk
		if !used {
			fill, ink = colUnused, colMuted
		}
		c.box("hkdf-context", cx, y, 300, 58, fill, ink, !used)
		c.text(cx+150, y+18, "middle", 11, "bold", ink, fmt.Sprintf("%s (%d)", h.name, h.num))
		c.text(cx+150, y+34, "middle", 10, "normal", ink, h.info)
		c.text(cx+150, y+50, "middle", 10, "normal", ink, h.derives)
		c.arrow("derive", 280, hy+25, cx, y+29, map[bool]string{true: "#555555", false: "#bbbbbb"}[used], !used)
		if !used {
			continue
		}
		// The derived keys of live inodes.
		var derived []string
		switch h.num {
		case fscrypt.HKDFContextKeyIdentifier:
			derived = []string{fmt.Sprintf("key identifier %x", m.KeyID)}
		case fscrypt.HKDFContextPerFileEncKey:
			for _, k := range keys {
				if k.keyLoaded {
					derived = append(derived, fmt.Sprintf("%s (ino %d): %s key, %d bytes", k.path, k.ino, k.mode.FriendlyName, k.mode.KeySize))
				}
			}
		case fscrypt.HKDFContextDirhashKey:
			for _, k := range keys {
				if k.keyLoaded && k.dir && k.casefold {
					derived = append(derived, fmt.Sprintf("%s (ino %d): SipHash-2-4 dirhash key, 16 bytes", k.path, k.ino))
				}
			}
		default:
			derived = []string{"one key per mode, shared by the policy's files"}
		}
		for j, s := range derived {
			kx, ky := cx+360, y+j*34
			c.box("derived-key", kx, ky, 420, 28, colKey, colInk, false)
			c.text(kx+10, ky+18, "start", 11, "normal", colInk, s)
			c.arrow("derive", cx+300, y+29, kx, ky+14, "#555555", false)
		}
	}
	// Inodes without keys.
	var missing []string
	for _, k := range keys {
		if !k.keyLoaded {
			missing = append(missing, k.path)
		}
	}
	if len(missing) > 0 {
		y := cy + len(hkdfContexts)*80 + 10
		c.text(20, y, "start", 11, "normal", colMuted, fmt.Sprintf("encrypted, no key set up now (evicted or key removed): %v", missing))
	}
	return c.String(title)
}

func putDentry(m *teach.Machine, d *vfs.Dentry) { dputDentry(m, d) }
