package io.sluice.gateway.records;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.gateway.broker.AdminOperation;
import io.sluice.gateway.broker.AdminResult;
import io.sluice.gateway.broker.AppendId;
import io.sluice.gateway.broker.AppendResult;
import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.BrokerErrorException;
import io.sluice.gateway.broker.BrokerTopology;
import io.sluice.gateway.broker.RecordToAppend;
import io.sluice.gateway.config.GatewayProperties;
import io.sluice.gateway.config.RecordsProperties;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RecordsServiceTest
{
    private static final int PARTITIONS = 6;
    private static final PartitionSelector SELECTOR = new PartitionSelector(PARTITIONS);

    private final RecordingBrokers brokers = new RecordingBrokers();
    private final RecordsService service = new RecordsService(brokers,
        PartitionDistribution.of("127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", PARTITIONS, 3), new GatewayProperties(),
        new RecordsProperties(), Clock.systemUTC(), new SimpleMeterRegistry());

    @Test
    void aKeyedRequestClaimsItsKeyOnTheHomePartitionFirstAndAloneThenSendsTheRest()
    {
        final String key = "request-1";
        final int home = SELECTOR.partitionFor(key);
        final List<RecordsService.IncomingRecord> records = recordsAvoiding(home, 4);
        brokers.answer = call -> call.partitionId() == home ? new CompletableFuture<>() : committed(call);

        final CompletableFuture<List<RecordPosition>> written = service.write(records, key, 42);

        assertThat(brokers.calls).hasSize(1);
        final Call claim = brokers.calls.get(0);
        assertThat(claim.partitionId()).isEqualTo(home);
        assertThat(claim.records()).as("an empty claim: no record goes to the home partition").isEmpty();
        assertThat(claim.id()).isEqualTo(AppendId.of(AppendId.CLIENT, key, 0, 42, Duration.ofMinutes(10).toMillis()));

        brokers.pending.get(0).complete(new AppendResult(home, 1, 0));
        assertThat(written).succeedsWithin(Duration.ofSeconds(5)).asList().hasSize(4);
        assertThat(brokers.calls).hasSizeGreaterThan(1);
        assertThat(brokers.calls.subList(1, brokers.calls.size()))
            .allSatisfy(call -> assertThat(call.id().scope()).isEqualTo(AppendId.CLIENT))
            .allSatisfy(call -> assertThat(call.partitionId()).isNotEqualTo(home));
    }

    @Test
    void anEmptyArrayUnderAKeyStillClaimsTheKeySoAnotherBodyIsRefusedLater()
    {
        brokers.answer = RecordsServiceTest::committed;

        assertThat(service.write(List.of(), "empty", 3).join()).isEmpty();

        assertThat(brokers.calls).singleElement().satisfies(call ->
        {
            assertThat(call.partitionId()).isEqualTo(SELECTOR.partitionFor("empty"));
            assertThat(call.records()).isEmpty();
            assertThat(call.id().bodyDigest()).isEqualTo(3);
        });
    }

    @Test
    void aConflictOnTheHomePartitionStopsTheRequestBeforeAnyOtherAppend()
    {
        final String key = "reused";
        final int home = SELECTOR.partitionFor(key);
        brokers.answer = call -> CompletableFuture.failedFuture(new BrokerErrorException(ErrorCode.CONFLICT, -1, "other body"));

        final CompletableFuture<List<RecordPosition>> written = service.write(recordsAvoiding(home, 3), key, 1);

        assertThatThrownBy(written::join).isInstanceOf(CompletionException.class)
            .hasRootCauseInstanceOf(BrokerErrorException.class);
        assertThat(brokers.calls).hasSize(1);
    }

    @Test
    void theSameRequestUnderTheSameKeyIsPlannedIntoTheSameSubBatchesWithTheSameIds()
    {
        brokers.answer = RecordsServiceTest::committed;
        final List<RecordsService.IncomingRecord> records = new ArrayList<>();
        for (int i = 0; i < 20; i++)
        {
            records.add(new RecordsService.IncomingRecord(i % 4 == 0 ? null : "k" + i, payload(i)));
        }
        service.write(records, "same", 7).join();
        final List<String> first = brokers.describeCalls();
        brokers.calls.clear();
        service.write(records, "same", 7).join();

        assertThat(brokers.describeCalls()).isEqualTo(first);
        final int home = SELECTOR.partitionFor("same");
        assertThat(brokers.calls).filteredOn(call -> call.records().stream().anyMatch(r -> r.key() == null))
            .as("records without a key go to the key's home partition, not round-robin")
            .allSatisfy(call -> assertThat(call.partitionId()).isEqualTo(home));
    }

    @Test
    void withoutAKeyEveryBatchCarriesTheGatewaysOwnIdAndNoClaimIsMade()
    {
        brokers.answer = RecordsServiceTest::committed;
        service.write(List.of(new RecordsService.IncomingRecord("a", payload(1)), new RecordsService.IncomingRecord("b", payload(2))),
            null, 0).join();
        final List<Call> firstRequest = List.copyOf(brokers.calls);
        brokers.calls.clear();
        service.write(List.of(new RecordsService.IncomingRecord("a", payload(1))), null, 0).join();

        assertThat(firstRequest).allSatisfy(call ->
        {
            assertThat(call.id().scope()).isEqualTo(AppendId.GATEWAY);
            assertThat(call.records()).isNotEmpty();
            assertThat(call.id().windowMs()).isGreaterThanOrEqualTo(30_000);
        });
        assertThat(brokers.calls.get(0).id()).as("another request, another id").isNotEqualTo(firstRequest.get(0).id());
    }

    @Test
    void batchesCountKeysNotOnlyPayloadsAgainstTheBatchLimit()
    {
        brokers.answer = RecordsServiceTest::committed;
        final String key = "k".repeat(60_000);
        final List<RecordsService.IncomingRecord> records = new ArrayList<>();
        for (int i = 0; i < 40; i++)
        {
            records.add(new RecordsService.IncomingRecord(key, payload(i)));
        }
        service.write(records, null, 0).join();

        assertThat(brokers.calls).hasSizeGreaterThan(1).allSatisfy(call ->
            assertThat(call.records().stream().mapToLong(r ->
                16 + r.key().getBytes(StandardCharsets.UTF_8).length + r.payload().length).sum())
                .isLessThanOrEqualTo(RecordsService.MAX_BATCH_BYTES));
    }

    private static List<RecordsService.IncomingRecord> recordsAvoiding(final int partition, final int count)
    {
        final List<RecordsService.IncomingRecord> records = new ArrayList<>();
        for (int i = 0; records.size() < count; i++)
        {
            if (SELECTOR.partitionFor("r" + i) != partition)
            {
                records.add(new RecordsService.IncomingRecord("r" + i, payload(i)));
            }
        }
        return records;
    }

    private static byte[] payload(final int i)
    {
        return ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static CompletableFuture<AppendResult> committed(final Call call)
    {
        return CompletableFuture.completedFuture(new AppendResult(call.partitionId(), 100, call.records().size()));
    }

    private record Call(int partitionId, List<RecordToAppend> records, AppendId id)
    {
    }

    private static final class RecordingBrokers implements BrokerClient
    {
        final List<Call> calls = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<AppendResult>> pending = new CopyOnWriteArrayList<>();
        Function<Call, CompletableFuture<AppendResult>> answer;

        @Override
        public CompletableFuture<AppendResult> append(
            final int partitionId, final List<RecordToAppend> records, final AppendId id, final Duration timeout)
        {
            final Call call = new Call(partitionId, List.copyOf(records), id);
            calls.add(call);
            final CompletableFuture<AppendResult> result = answer.apply(call);
            pending.add(result);
            return result;
        }

        List<String> describeCalls()
        {
            return calls.stream().map(call -> call.partitionId() + " " + call.records().size() + " " + call.id()).toList();
        }

        @Override
        public CompletableFuture<AdminResult> admin(
            final PartitionReplica target, final AdminOperation operation, final Duration timeout)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<BrokerTopology> topology(final int brokerId, final Duration timeout)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close()
        {
        }
    }
}
