package f2fs_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/vfs"
)

// TestSubblockDataUnits: f2fs_cryptops sets supports_subblock_data_units
// (fs/f2fs/super.c, since Linux 6.7), so a v2 policy may name a data unit
// of 512..4096 bytes (set_encpolicy -s 9); below a sector or above the
// block it is EINVAL. A file in such a directory reads back what was
// written after its pages and key are dropped and the key added again.
func TestSubblockDataUnits(t *testing.T) {
	e := boot(t, nil)
	raw := bytes.Repeat([]byte{0x5a}, 64)
	root, err := e.P.Open(e.T, "/", vfs.O_RDONLY, 0)
	e.Must(err)
	defer e.P.Close(e.T, root)
	id, err := e.P.AddEncryptionKey(e.T, root, raw)
	e.Must(err)
	for _, c := range []struct {
		du  uint8
		err error
	}{{9, nil}, {10, nil}, {12, nil}, {8, errno.EINVAL}, {13, errno.EINVAL}} {
		dir := "/du" + string(rune('a'+c.du))
		e.Must(e.P.Mkdir(e.T, dir, 0o755))
		fd, err := e.P.Open(e.T, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		e.Must(err)
		pol := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS,
			Flags: fscrypt.PolicyFlagsPad32, Log2DataUnitSize: c.du, Identifier: id}
		err = e.P.SetEncryptionPolicy(e.T, fd, pol)
		e.P.Close(e.T, fd)
		if err != c.err {
			t.Errorf("log2_data_unit_size %d: %v, want %v", c.du, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		data := strings.Repeat("sub-block data units on f2fs ", 400)
		e.Write(dir+"/f", data)
		if _, err := e.P.RemoveEncryptionKey(e.T, root, id); err != nil {
			t.Fatal(err)
		}
		if id, err = e.P.AddEncryptionKey(e.T, root, raw); err != nil {
			t.Fatal(err)
		}
		if got, err := e.Read(dir + "/f"); err != nil || got != data {
			t.Errorf("log2_data_unit_size %d: read back %d bytes, %v", c.du, len(got), err)
		}
	}
	if e.T.K.Log.Contains("Filesystem does not support configuring crypto data unit size") {
		t.Error("f2fs refused a data unit size")
	}
}
