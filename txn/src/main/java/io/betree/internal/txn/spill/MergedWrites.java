package io.betree.internal.txn.spill;

import io.betree.internal.log.CommitRecord.Op;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * Merges sorted sources of writes into one ascending sequence with one write per key: where sources
 * share a key, the write of the later source (the newer one) wins.
 */
final class MergedWrites implements Iterator<Op> {
    private record Head(Op op, int age, Iterator<Op> rest) {
    }

    private final PriorityQueue<Head> heads = new PriorityQueue<>((a, b) -> {
        int c = SortedRun.compare(a.op, b.op);
        return c != 0 ? c : Integer.compare(b.age, a.age);
    });

    /** @param sources sorted sources, oldest first */
    MergedWrites(List<Iterator<Op>> sources) {
        for (int i = 0; i < sources.size(); i++) {
            push(i, sources.get(i));
        }
    }

    private void push(int age, Iterator<Op> source) {
        if (source.hasNext()) {
            heads.add(new Head(source.next(), age, source));
        }
    }

    @Override
    public boolean hasNext() {
        return !heads.isEmpty();
    }

    @Override
    public Op next() {
        Head newest = heads.poll();
        if (newest == null) {
            throw new NoSuchElementException();
        }
        push(newest.age, newest.rest);
        while (!heads.isEmpty() && SortedRun.compare(heads.peek().op, newest.op) == 0) {
            Head older = heads.poll();
            push(older.age, older.rest);
        }
        return newest.op;
    }
}
