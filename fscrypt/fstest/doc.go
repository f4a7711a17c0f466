// Package fstest holds what the tests of package fscrypt and of the tools
// above it share: the known-answer files (LoadVectors, compiled into the
// test binary) and their hex helper. The fscrypt host without a
// filesystem that the tests also use is package fscrypt/bare.
package fstest
