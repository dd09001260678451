package io.betree.compression;

/** Contract run for zstd at the negative (fast) level -1. */
class ZstdFastLevelTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new ZstdCompressor(-1);
    }
}
