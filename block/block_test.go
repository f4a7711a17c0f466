package block

import (
	"errors"
	"testing"

	"github.com/vfslab/vfslab/errno"
)

func TestBioFolios(t *testing.T) {
	b := NewBio(4)
	f0 := NewFolio(10, 0)
	f1 := NewFolio(11, 2)
	if f1.Size() != 4*PageSize || f1.Pos() != 11*PageSize || len(f1.Data) != f1.Size() {
		t.Fatalf("folio geometry: %v", f1)
	}
	if !b.AddFolio(f0, PageSize, 0) || !b.AddFolio(f1, 2*PageSize, PageSize) {
		t.Fatal("AddFolio refused a valid range")
	}
	for _, c := range []struct{ len, off int }{{0, 0}, {PageSize + 1, 0}, {16, PageSize}, {-1, 0}, {16, -16}} {
		if b.AddFolio(f0, c.len, c.off) {
			t.Errorf("AddFolio accepted len %d off %d", c.len, c.off)
		}
	}
	if b.AddFolio(nil, 16, 0) {
		t.Error("AddFolio accepted a nil folio")
	}
	if b.Size() != 3*PageSize || b.FirstFolioAll() != f0 {
		t.Errorf("bio %v", b)
	}
	var got []FolioIter
	var fi FolioIter
	for BioFirstFolio(&fi, b, 0); fi.Folio != nil; BioNextFolio(&fi, b) {
		got = append(got, fi)
	}
	var ranged []FolioIter
	for fi := range BioForEachFolioAll(b) {
		ranged = append(ranged, fi)
	}
	if len(got) != 2 || len(ranged) != 2 || got[1].Folio != f1 || got[1].Offset != PageSize || got[1].Length != 2*PageSize || ranged[1] != got[1] {
		t.Errorf("iteration: %+v / %+v", got, ranged)
	}
	for range BioForEachFolioAll(b) {
		break // stopping early must not panic
	}
	if s := b.String(); s != "bio{status=BLK_STS_OK size=12288 vecs=[10+0/4096 11+4096/8192]}" {
		t.Errorf("String() = %q", s)
	}
	if NewBio(0).FirstFolioAll() != nil {
		t.Error("empty bio has a first folio")
	}
}

func TestEndIO(t *testing.T) {
	b := NewBio(1)
	called := 0
	b.EndIO = func(bio *Bio) {
		if bio != b {
			t.Error("EndIO got another bio")
		}
		called++
	}
	BioEndio(b)
	BioEndio(NewBio(0)) // no callback: nothing happens
	if called != 1 {
		t.Errorf("EndIO called %d times", called)
	}
}

func TestBlkStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		sts  BlkStatus
		back error
	}{
		{nil, BlkStsOK, nil},
		{errno.ENOMEM, BlkStsResource, errno.ENOMEM},
		{errno.EAGAIN, BlkStsAgain, errno.EAGAIN},
		{errno.EIO, BlkStsIOErr, errno.EIO},
		{errno.EBADMSG, BlkStsIOErr, errno.EIO},
		{errors.New("not an errno"), BlkStsIOErr, errno.EIO},
	} {
		s := ErrnoToBlkStatus(c.err)
		if s != c.sts {
			t.Errorf("%v -> %v, want %v", c.err, s, c.sts)
		}
		if back := BlkStatusToErrno(s); back != c.back {
			t.Errorf("%v -> %v", s, back)
		}
	}
	if BlkStsIOErr.String() != "BLK_STS_IOERR" || BlkStatus(200).String() != "BLK_STS(200)" {
		t.Error("status names")
	}
}

func TestFolioOrderLimit(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("order above MaxFolioOrder accepted")
		}
	}()
	NewFolio(0, MaxFolioOrder+1)
}
