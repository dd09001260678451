package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

/** The clock's choice of victims, with the states an entry can be in. */
class ClockRingTest {

    /** An entry with nothing in it: the ring looks only at its flags and pins. */
    private static class Bare extends CacheEntry {
        Bare(long block) {
            super(block);
        }

        @Override
        public BlockCompressor compressor() {
            throw new UnsupportedOperationException();
        }

        @Override
        public long memoryBytes() {
            return 0;
        }

        @Override
        public int serializedSizeBound() {
            return 0;
        }

        @Override
        public void serialize(ByteBuf out) {
            throw new UnsupportedOperationException();
        }

        @Override
        protected void releaseMemory() {
        }
    }

    private static Bare entry(ClockRing ring, long block, boolean dirty, boolean referenced, int pins) {
        Bare e = new Bare(block);
        e.dirty = dirty;
        e.referenced = referenced;
        e.setPins(pins);
        ring.add(e);
        return e;
    }

    @Test
    void secondChanceSkipsPinnedAndReferencedOnce() {
        ClockRing ring = new ClockRing();
        Bare pinned = entry(ring, 1, false, false, 1);
        Bare referenced = entry(ring, 2, true, true, 0);
        Bare cold = entry(ring, 3, true, false, 0);
        assertSame(cold, ring.nextVictim(true));
        assertFalse(referenced.referenced, "the hand took its second chance");
        assertSame(referenced, ring.nextVictim(true));
        ring.remove(referenced);
        ring.remove(cold);
        assertNull(ring.nextVictim(true), "only a pinned entry is left");
        assertFalse(ring.anyEvictable(true));
        pinned.setPins(0);
        assertTrue(ring.anyEvictable(true));
        assertSame(pinned, ring.nextVictim(true));
    }

    @Test
    void cleanVictimPassesOverDirtyAndReferencedWithoutTakingTheirChance() {
        ClockRing ring = new ClockRing();
        Bare dirty = entry(ring, 1, true, false, 0);
        Bare hotClean = entry(ring, 2, false, true, 0);
        Bare owed = entry(ring, 3, false, false, 0);
        owed.checkpointPending = true;
        Bare writing = entry(ring, 4, false, false, 0);
        writing.writing = true;
        assertNull(ring.nextCleanVictim(), "nothing clean, cold and free");
        assertTrue(hotClean.referenced, "a look for a clean victim changes no second chance");
        Bare coldClean = entry(ring, 5, false, false, 0);
        assertSame(coldClean, ring.nextCleanVictim());
        assertSame(dirty, ring.nextVictim(true), "the ordinary sweep still takes dirty entries");
    }

    @Test
    void keptResidentGoesOnlyOverTheHardLimitWhenNothingElseCan() {
        ClockRing ring = new ClockRing();
        Bare root = entry(ring, 1, true, false, 0);
        root.keepResident(true);
        Bare cleanRoot = entry(ring, 2, false, false, 0);
        cleanRoot.keepResident(true);
        Bare hot = entry(ring, 3, true, true, 0);
        assertSame(hot, ring.nextVictim(true), "a referenced entry goes before a cold one kept resident");
        assertNull(ring.nextCleanVictim(), "a clean entry kept resident is no clean victim");
        ring.remove(hot);
        assertNull(ring.nextVictim(false), "below the hard limit kept entries stay");
        assertFalse(ring.anyEvictable(false));
        assertTrue(ring.anyEvictable(true));
        CacheEntry last = ring.nextVictim(true);
        assertTrue(last == root || last == cleanRoot, "with nothing else left, over the hard limit, kept entries go");
        root.keepResident(false);
        cleanRoot.keepResident(false);
        assertSame(cleanRoot, ring.nextCleanVictim(), "the hint withdrawn, it is an ordinary entry again");
    }

    /** As an internal node: asks for two extra sweeps. */
    private static final class Sticky extends Bare {
        Sticky(long block) {
            super(block);
        }

        @Override
        protected int extraSweeps() {
            return 2;
        }
    }

    @Test
    void entriesAskingForExtraSweepsOutlastOthers() {
        ClockRing ring = new ClockRing();
        Sticky internal = new Sticky(1);
        internal.referenced = true;
        ring.add(internal);
        Bare basement = entry(ring, 2, false, true, 0);
        // Both used once, neither removed (as if pinned again before eviction): the hand offers
        // the basement on its first two rounds and the internal node only on the third.
        assertSame(basement, ring.nextVictim(true));
        assertSame(basement, ring.nextVictim(true));
        assertSame(internal, ring.nextVictim(true));
        // Used again, its sweeps start over: the basement is offered four more times first
        // (without the reference the internal node would come right after one of them).
        internal.referenced = true;
        for (int round = 0; round < 4; round++) {
            assertSame(basement, ring.nextVictim(true), "round " + round);
        }
        assertSame(internal, ring.nextVictim(true));
    }

    @Test
    void aRingOfInternalNodesStillYieldsAVictim() {
        ClockRing ring = new ClockRing();
        for (int block = 1; block <= 3; block++) {
            Sticky e = new Sticky(block);
            e.referenced = true;
            ring.add(e);
        }
        assertNotNull(ring.nextVictim(false), "every entry referenced and asking for extra sweeps");
    }

    @Test
    void belowTheHardLimitOrdinaryEntriesGoAndKeptOnesStay() {
        ClockRing ring = new ClockRing();
        Bare root = entry(ring, 1, true, false, 0);
        root.keepResident(true);
        Bare leaf = entry(ring, 2, true, true, 0);
        assertSame(leaf, ring.nextVictim(false));
        ring.remove(leaf);
        assertNull(ring.nextVictim(false));
        assertSame(root, ring.nextVictim(true));
    }

    /** An entry just read from its block, as the cache adds one. */
    private static Bare loaded(ClockRing ring, long block) {
        Bare e = new Bare(block);
        ring.addLoaded(e);
        return e;
    }

    @Test
    void blocksReadOnceGoBeforeTheClockOnceProbationIsPastItsShare() {
        ClockRing ring = new ClockRing();
        Bare leaf = entry(ring, 1, false, false, 0); // in the clock, not used since the hand passed
        for (int block = 2; block <= 10; block++) {
            entry(ring, block, false, true, 0);
        }
        Bare first = loaded(ring, 11);
        assertTrue(first.onProbation);
        assertFalse(first.referenced, "its reader's own use does not count");
        assertEquals(1, ring.onProbation());
        assertSame(leaf, ring.nextVictim(true), "one of eleven on probation is within its share: the clock chooses");
        Bare second = loaded(ring, 12);
        assertSame(first, ring.nextVictim(true), "two of twelve: the oldest on probation goes");
        assertSame(first, ring.nextVictim(true), "offered again until it leaves");
        ring.remove(first);
        assertFalse(first.onProbation);
        assertEquals(1, ring.onProbation());
        assertSame(leaf, ring.nextVictim(true), "back within the share");
        assertTrue(second.onProbation);
    }

    @Test
    void anEntryUsedAgainJoinsTheClockAndABlockReadAgainSoonSkipsProbation() {
        ClockRing ring = new ClockRing();
        for (int block = 1; block <= 8; block++) {
            entry(ring, block, false, true, 0);
        }
        Bare reused = loaded(ring, 20);
        Bare once = loaded(ring, 21);
        Bare pinned = loaded(ring, 22);
        pinned.setPins(1);
        reused.referenced = true; // pinned again by a later read
        assertSame(once, ring.nextVictim(true), "the reused one moves to the clock, the pinned one waits its turn");
        assertFalse(reused.onProbation);
        assertTrue(reused.referenced, "it joins the clock as used");
        assertTrue(pinned.onProbation);
        ring.remove(once);
        Bare again = loaded(ring, 21);
        assertFalse(again.onProbation, "read again soon after leaving probation unused");
        assertTrue(again.referenced);
    }

    @Test
    void aPinSoonAfterTheLoadIsPartOfThatUse() {
        ClockRing ring = new ClockRing();
        for (int block = 1; block <= 8; block++) {
            entry(ring, block, false, true, 0);
        }
        Bare scanned = loaded(ring, 20);
        ring.use(scanned); // a cursor's next batch, right after the first
        assertFalse(scanned.referenced, "pinned again before other loads: the same use");
        for (int block = 21; block < 21 + ClockRing.CORRELATED_LOADS; block++) {
            loaded(ring, block);
        }
        ring.use(scanned);
        assertTrue(scanned.referenced, "pinned again after other loads: a second use");
        Bare inClock = entry(ring, 2_000, false, false, 0);
        ring.use(inClock);
        assertTrue(inClock.referenced, "an entry in the clock is marked by any pin");
    }

    @Test
    void aRootReadBackAndKeptResidentStillGoesPastTheHardLimit() {
        ClockRing ring = new ClockRing();
        Bare root = loaded(ring, 1);
        root.keepResident(true);
        assertNull(ring.nextVictim(false), "below the hard limit it stays");
        assertTrue(ring.anyEvictable(true));
        assertSame(root, ring.nextVictim(true), "what anyEvictable counts, nextVictim must offer");
    }

    @Test
    void entriesOnProbationGoWhenTheClockHasNothingElse() {
        ClockRing ring = new ClockRing();
        Bare pinned = entry(ring, 1, false, false, 1);
        Bare young = loaded(ring, 2);
        for (int block = 3; block <= 30; block++) {
            entry(ring, block, false, false, 1);
        }
        assertSame(young, ring.nextVictim(false), "within its share, but nothing else can go");
        ring.remove(young);
        assertNull(ring.nextVictim(true));
        assertFalse(ring.anyEvictable(true));
        pinned.setPins(0);
        assertSame(pinned, ring.nextVictim(true));
        ring.clear();
        assertEquals(0, ring.onProbation());
    }

    @Test
    void removalKeepsTheRingWhole() {
        ClockRing ring = new ClockRing();
        Bare a = entry(ring, 1, false, false, 0);
        Bare b = entry(ring, 2, false, false, 0);
        Bare c = entry(ring, 3, false, false, 0);
        ring.remove(a);
        assertTrue(a.ringIndex < 0);
        int seen = 0;
        for (CacheEntry e : ring) {
            assertTrue(e == b || e == c);
            seen++;
        }
        assertEquals(2, seen);
        ring.clear();
        assertNull(ring.nextVictim(true));
    }
}
