package io.betree.compression;

/** Contract run for xz at preset 0. */
class XzPreset0Test extends BlockCompressorContract {

    @Override
    protected BlockCompressor compressor() {
        return new XzCompressor(0);
    }

    @Override
    protected boolean checksummed() {
        return true;
    }
}
