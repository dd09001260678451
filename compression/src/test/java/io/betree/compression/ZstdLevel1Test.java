package io.betree.compression;

/** Contract run for zstd at level 1. */
class ZstdLevel1Test extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new ZstdCompressor(1);
    }
}
