package io.betree.compression;

/** Contract run for LZ4 with the high-compression compressor at level 9. */
class Lz4HighCompressorTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new Lz4Compressor(9);
    }
}
