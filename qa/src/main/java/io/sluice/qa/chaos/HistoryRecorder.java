package io.sluice.qa.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Collects a run's history as it happens: one clock (milliseconds since the recorder was made, monotonic), operation
 * ids, and the exported lines the {@link ExportWatcher} saw. Thread-safe.
 */
public final class HistoryRecorder
{
    private final long origin = System.nanoTime();
    private final AtomicInteger ids = new AtomicInteger();
    private final List<Operation> operations = new ArrayList<>();
    private final List<Export> exports = new ArrayList<>();

    public long now()
    {
        return (System.nanoTime() - origin) / 1_000_000;
    }

    public int nextId()
    {
        return ids.incrementAndGet();
    }

    public synchronized void record(final Operation operation)
    {
        operations.add(operation);
    }

    public synchronized void exported(final Export export)
    {
        exports.add(export);
    }

    public synchronized List<Operation> operations()
    {
        return List.copyOf(operations);
    }

    public synchronized int exportCount()
    {
        return exports.size();
    }

    public synchronized History history(final Map<Integer, List<Integer>> replicas)
    {
        return new History(new ArrayList<>(operations), new ArrayList<>(exports), replicas);
    }
}
