package io.betree.compression;

/** Contract run for the identity codec. */
class NoneCompressorTest extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new NoneCompressor();
    }

    @Override
    protected boolean shrinksCompressibleInput() {
        return false;
    }
}
