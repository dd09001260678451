package io.betree.compression;

/** Contract run for zstd at level 3. */
class ZstdLevel3Test extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new ZstdCompressor(3);
    }
}
