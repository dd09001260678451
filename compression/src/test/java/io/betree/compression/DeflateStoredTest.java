package io.betree.compression;

/** Contract run for deflate at level 0, which only stores. */
class DeflateStoredTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new DeflateCompressor(0);
    }

    @Override
    protected boolean shrinksCompressibleInput() {
        return false;
    }
}
