package io.sluice.qa.operator;

import io.sluice.qa.Exporting;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 28: the console stays usable at 3 brokers × 64 partitions (192 pairs) of separate JVMs: the grid shows every
 * pair, and a pause confirmed in the console shows all 192 paused. Prints the time to the first full picture.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ConsoleWith192PairsIT
{
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Duration STATE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(120));

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private SluiceCluster cluster;
    private WebDriver browser;

    @BeforeAll
    void startClusterAndBrowser()
    {
        Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
            "no headless browser here: install Debian's chromium and chromium-driver (.ci/run does) to run the console tests");
        cluster = RUN.cluster("cluster", builder -> builder.partitions(64).requestTimeout(Duration.ofSeconds(5)));
        cluster.start();
        cluster.awaitReady(SluiceCluster.STARTUP_TIMEOUT);
        Exporting.everyBrokerUp(cluster);
        final ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1600,1000");
        browser = new ChromeDriver(new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort().build(), options);
    }

    @AfterAll
    void stopBrowser()
    {
        if (browser != null)
        {
            browser.quit();
        }
    }

    @Test
    void theGridShowsAll192PairsAndAPauseFromTheConsoleReachesEveryOne() throws Exception
    {
        browser.get(cluster.client().managementBase().resolve("/console").toString());
        await(d -> browser.findElements(By.cssSelector("#pair-grid td.pair")).size() == 192);
        final Object firstRender = ((JavascriptExecutor) browser).executeScript("return document.documentElement.dataset.firstRenderMs");
        System.out.println("console with 192 pairs: first full picture " + firstRender + " ms after navigation");
        cluster.log("console with 192 pairs: first full picture " + firstRender + " ms after navigation");

        browser.findElement(By.id("action-pause")).click();
        await(d -> browser.findElement(By.id("confirm-dialog")).isDisplayed());
        assertThat(browser.findElement(By.id("confirm-body")).getText()).contains("all 192 (broker, partition) pairs");
        browser.findElement(By.id("confirm-ok")).click();
        await(d -> browser.findElement(By.id("operation-title")).getText().startsWith("Pause: SUCCEEDED"));
        await(d -> browser.findElements(By.cssSelector("#pair-grid td.pair[data-state='PAUSED']")).size() == 192);
        Files.createDirectories(Path.of("target", "console-screenshots"));
        Files.copy(((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath(),
            Path.of("target", "console-screenshots", "grid-192-paused.png"), StandardCopyOption.REPLACE_EXISTING);
        assertThat(cluster.client().exporting().state()).isEqualTo("PAUSED");
    }

    private void await(final java.util.function.Function<WebDriver, Boolean> condition)
    {
        new WebDriverWait(browser, STATE_TIMEOUT, Duration.ofMillis(200)).until(condition::apply);
    }
}
