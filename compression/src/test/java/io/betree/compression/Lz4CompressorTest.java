package io.betree.compression;

/** Contract run for LZ4 with the fast compressor. */
class Lz4CompressorTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new Lz4Compressor();
    }
}
