package io.sluice.exporter.spi;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class ExporterSettingsTest
{
    private static ExporterSettings settings(final String... nameValues)
    {
        final Map<String, String> properties = new java.util.HashMap<>();
        for (int i = 0; i < nameValues.length; i += 2)
        {
            properties.put(nameValues[i], nameValues[i + 1]);
        }
        return new ExporterSettings("bus", properties);
    }

    @Test
    void everySpellingAnEnvironmentVariableOrCommandLineGivesIsTheSameSetting()
    {
        for (final String spelling : List.of("bootstrap-servers", "bootstrapServers", "bootstrapservers",
            "BOOTSTRAP_SERVERS", "bootstrap.servers", "Bootstrap-Servers"))
        {
            assertThat(settings(spelling, "k:9092").text("bootstrap-servers")).as(spelling).isEqualTo("k:9092");
        }
        assertThat(settings("retry.maxbackoff", "5s").contains("retry.max-backoff")).isTrue();
        assertThat(settings("bulk.max.records", "5").number("bulk.max-records", 1, 1, 10)).isEqualTo(5);
    }

    @Test
    void aMissingOrBlankSettingTakesTheDefault()
    {
        assertThat(settings().text("topic", "sluice-records")).isEqualTo("sluice-records");
        assertThat(settings("topic", "  ").text("topic", "sluice-records")).isEqualTo("sluice-records");
        assertThat(settings("topic", " events ").text("topic")).isEqualTo("events");
    }

    @Test
    void durationsTakeUnitsIsoAndBareMilliseconds()
    {
        assertThat(settings("d", "5s").duration("d", null)).isEqualTo(Duration.ofSeconds(5));
        assertThat(settings("d", "500ms").duration("d", null)).isEqualTo(Duration.ofMillis(500));
        assertThat(settings("d", "2m").duration("d", null)).isEqualTo(Duration.ofMinutes(2));
        assertThat(settings("d", "1h").duration("d", null)).isEqualTo(Duration.ofHours(1));
        assertThat(settings("d", "1d").duration("d", null)).isEqualTo(Duration.ofDays(1));
        assertThat(settings("d", "PT30S").duration("d", null)).isEqualTo(Duration.ofSeconds(30));
        assertThat(settings("d", "250").duration("d", null)).isEqualTo(Duration.ofMillis(250));
        assertThat(settings("d", "10 S").duration("d", null)).isEqualTo(Duration.ofSeconds(10));
        assertThat(settings().duration("d", Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void aDurationThatIsNotOneOrNotPositiveIsRefusedNamingTheFullSettingAsGiven()
    {
        for (final String bad : List.of("soon", "5 parsecs", "0s", "-1s", "PTfoo", "s"))
        {
            assertThatThrownBy(() -> settings("retry.maxBackoff", bad).duration("retry.max-backoff", null))
                .as(bad)
                .isInstanceOf(ExporterConfigException.class)
                .hasMessage("sluice.exporters.bus.retry.maxBackoff: '" + bad.trim() +
                    "' is not a positive duration (e.g. 500ms, 5s, 2m)");
        }
    }

    @Test
    void sizesArePowersOf1024WithOrWithoutAUnit()
    {
        assertThat(settings("s", "10MB").size("s", 0)).isEqualTo(10L * 1024 * 1024);
        assertThat(settings("s", "512kb").size("s", 0)).isEqualTo(512L * 1024);
        assertThat(settings("s", "1GB").size("s", 0)).isEqualTo(1L << 30);
        assertThat(settings("s", "100B").size("s", 0)).isEqualTo(100);
        assertThat(settings("s", "4096").size("s", 0)).isEqualTo(4096);
        assertThat(settings().size("s", 7)).isEqualTo(7);
        for (final String bad : List.of("lots", "10XB", "0MB", "MB", "-5MB", "99999999999999999TB"))
        {
            assertThatThrownBy(() -> settings("bulk.max-bytes", bad).size("bulk.max-bytes", 0))
                .as(bad)
                .isInstanceOf(ExporterConfigException.class)
                .hasMessageStartingWith("sluice.exporters.bus.bulk.max-bytes: '" + bad + "' is not a positive size");
        }
    }

    @Test
    void anUnknownSettingIsRefusedNamingItAsGivenWhileKnownOnesPassInAnySpelling()
    {
        settings("BOOTSTRAP_SERVERS", "k:1", "topic", "t", "producer.linger.ms", "2")
            .requireOnly(List.of("bootstrap-servers", "topic"), List.of("producer"), "a kafka exporter");
        final ExporterConfigException refused = (ExporterConfigException)org.assertj.core.api.Assertions.catchThrowable(
            () -> settings("bootstrap-servers", "k:1", "topik", "t")
                .requireOnly(List.of("bootstrap-servers", "topic"), List.of("producer"), "a kafka exporter"));
        assertThat(refused.getMessage()).isEqualTo("sluice.exporters.bus.topik: unknown setting of a kafka exporter " +
            "(known: bootstrap-servers, producer.<name>, topic)");
        assertThat(refused.property()).isEqualTo("topik");
        assertThat(refused.setting("other")).isEqualTo("sluice.exporters.bus.topik");
    }

    @Test
    void aGroupHoldsTheRestOfItsMembersNamesAndNamesThemWithThePrefix()
    {
        final ExporterSettings producer = settings("producer.linger.ms", "2", "PRODUCER.acks", "all", "producers", "x",
            "topic", "t").group("producer");
        assertThat(producer.asMap()).containsOnly(Map.entry("linger.ms", "2"), Map.entry("acks", "all"));
        assertThatThrownBy(() -> producer.number("linger.ms", 0, 0, 1))
            .hasMessage("sluice.exporters.bus.producer.linger.ms: 2 is not from 0 to 1");
    }

    @Test
    void twoSpellingsOfOneSettingWithDifferentValuesAreRefused()
    {
        assertThat(settings("topic", "a", "TOPIC", "a").text("topic")).isEqualTo("a");
        assertThatThrownBy(() -> settings("topic", "a", "TOPIC", "b").text("topic"))
            .isInstanceOf(ExporterConfigException.class)
            .hasMessageContaining("given twice with different values");
    }

    @Test
    void choicesFlagsAndNumbersAreMatchedLeniently()
    {
        assertThat(settings("on-rejected", "DEAD_LETTER").choice("on-rejected", "retry", "retry", "dead-letter"))
            .isEqualTo("dead-letter");
        assertThatThrownBy(() -> settings("on-rejected", "drop").choice("on-rejected", "retry", "retry", "dead-letter"))
            .hasMessage("sluice.exporters.bus.on-rejected: 'drop' is not one of retry, dead-letter");
        assertThat(settings("f", "TRUE").flag("f", false)).isTrue();
        assertThatThrownBy(() -> settings("f", "yes").flag("f", false)).hasMessageContaining("neither true nor false");
        assertThatThrownBy(() -> settings("n", "ten").number("n", 1, 1, 5)).hasMessageContaining("not a whole number");
    }

    @Test
    void withoutTakesOffNamesAndGroupsInAnySpelling()
    {
        assertThat(settings("start-from", "latest", "STARTFROM", "latest", "retry.max-backoff", "5s",
            "RETRY_MAXBACKOFF", "5s", "retrying", "x", "topic", "t")
            .without(List.of("start-from", "type", "retry.max-backoff"), List.of("retry")))
            .containsOnlyKeys("retrying", "topic");
    }

    @Test
    void aContextsArgsAreFoundInAnySpellingOfTheirPrefix()
    {
        final ExporterContext context = new ExporterContext("audit", 1, 0, null,
            Map.of("args.out", "/a", "ARGS.level", "3", "arguments", "x"));
        assertThat(context.args()).containsOnly(Map.entry("out", "/a"), Map.entry("level", "3"));
    }
}
