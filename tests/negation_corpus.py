"""The corpus the negation detector (sitegen/negation.py) is measured on (benchmarks/RESULTS.md, "Negated keywords"):
sentences as ops diagnoses write them, each with an expected keyword and whether the sentence denies it.

Pairs: a reversal (the keyword denied, by each trigger the lists name) and look-alikes that must stay affirmed (a
pseudo-trigger, a trigger in an earlier clause, a trigger after the keyword, a terminator between, a trigger too
far away, the keyword's own characters).
"""

from __future__ import annotations

from typing import NamedTuple


class Sentence(NamedTuple):
    text: str
    keyword: str
    negated: bool
    kind: str  # what the sentence tests


NEGATED, AFFIRMED = True, False

CORPUS: tuple[Sentence, ...] = (
    # Chinese reversals
    Sentence("根因并非支付渠道响应变慢", "支付渠道", NEGATED, "并非"),
    Sentence("根因是支付渠道响应变慢", "支付渠道", AFFIRMED, "plain"),
    Sentence("这次超时不是连接池耗尽造成的", "连接池", NEGATED, "不是"),
    Sentence("这次超时是连接池耗尽造成的", "连接池", AFFIRMED, "plain"),
    Sentence("也没有占满 payment-service 的出站 HTTP 连接池", "连接池", NEGATED, "没有, mixed script"),
    Sentence("占满了 payment-service 的出站 HTTP 连接池", "连接池", AFFIRMED, "plain, mixed script"),
    Sentence("日志中未出现 Full GC", "Full GC", NEGATED, "未"),
    Sentence("日志中出现了频繁的 Full GC", "Full GC", AFFIRMED, "plain"),
    Sentence("已排除数据库慢查询", "慢查询", NEGATED, "排除"),
    Sentence("主因是数据库慢查询", "慢查询", AFFIRMED, "plain"),
    Sentence("DBA 否认存在长事务", "长事务", NEGATED, "否认"),
    Sentence("DBA 确认存在长事务", "长事务", AFFIRMED, "plain"),
    Sentence("并没有发生内存泄漏", "内存泄漏", NEGATED, "并没有"),
    Sentence("确实发生了内存泄漏", "内存泄漏", AFFIRMED, "plain"),
    Sentence("节点无磁盘压力", "磁盘压力", NEGATED, "无"),
    Sentence("节点出现磁盘压力", "磁盘压力", AFFIRMED, "plain"),
    Sentence("该服务不存在缓存击穿", "缓存击穿", NEGATED, "不存在"),
    Sentence("该服务存在缓存击穿", "缓存击穿", AFFIRMED, "plain"),
    Sentence("问题不属于网络抖动", "网络抖动", NEGATED, "不属于"),
    Sentence("问题属于网络抖动", "网络抖动", AFFIRMED, "plain"),
    Sentence("发布后不再出现 OOM", "OOM", NEGATED, "不再"),
    Sentence("发布后反复出现 OOM", "OOM", AFFIRMED, "plain"),
    Sentence("没配置 preStop 钩子", "preStop", NEGATED, "没"),
    Sentence("配置了 preStop 钩子", "preStop", AFFIRMED, "plain"),
    Sentence("此次故障并不涉及证书过期", "证书", NEGATED, "并不"),
    # Chinese look-alikes that must stay affirmed
    Sentence("服务无法获取数据库连接池中的连接", "连接池", AFFIRMED, "pseudo 无法"),
    Sentence("接口响应非常慢，连接池被占满", "连接池", AFFIRMED, "pseudo 非常"),
    Sentence("连接数不断增加，最终连接池耗尽", "连接池", AFFIRMED, "pseudo 不断"),
    Sentence("不仅支付超时，退款也超时", "支付", AFFIRMED, "pseudo 不仅"),
    Sentence("未必是网络问题，更可能是连接池耗尽", "连接池", AFFIRMED, "pseudo 未必, earlier clause"),
    Sentence("未必是连接池耗尽", "连接池", AFFIRMED, "pseudo 未必"),
    Sentence("没有发现异常流量，根因是连接池耗尽", "连接池", AFFIRMED, "trigger in an earlier clause"),
    Sentence("不是网络问题。根因是慢查询", "慢查询", AFFIRMED, "trigger in an earlier sentence"),
    Sentence("连接池耗尽，并非网络问题", "连接池", AFFIRMED, "trigger after the keyword"),
    Sentence("慢查询导致了超时，不是网络", "慢查询", AFFIRMED, "trigger after the keyword"),
    Sentence("不是网络抖动而是连接池耗尽", "连接池", AFFIRMED, "terminator 而是"),
    Sentence("没有扩容，但连接池已经耗尽", "连接池", AFFIRMED, "terminator 但"),
    Sentence("未释放的连接导致连接池耗尽", "连接池", AFFIRMED, "terminator 导致"),
    Sentence("未发现证书问题", "证书", AFFIRMED, "keyword's own characters (未发现 expected too)"),
    Sentence("未能获取连接池中的连接", "连接池", AFFIRMED, "pseudo 未能"),
    Sentence("不断重试导致支付超时", "支付", AFFIRMED, "pseudo 不断"),
    Sentence("毫无疑问是连接池耗尽", "连接池", AFFIRMED, "pseudo 毫无疑问"),
    Sentence("连接池不足导致支付失败", "支付", AFFIRMED, "不足 is no trigger"),
    Sentence("非预期的 Full GC 拖慢了请求", "Full GC", AFFIRMED, "bare 非 is no trigger"),
    Sentence("没有做限流的情况下大量请求最终把下游数据库的连接池全部占满", "连接池", AFFIRMED, "beyond the window"),
    # English reversals
    Sentence("Not a payment channel problem.", "payment", NEGATED, "not"),
    Sentence("A payment channel problem.", "payment", AFFIRMED, "plain"),
    Sentence("There was no connection pool exhaustion.", "connection pool", NEGATED, "no"),
    Sentence("There was connection pool exhaustion.", "connection pool", AFFIRMED, "plain"),
    Sentence("The service never hit a timeout", "timeout", NEGATED, "never"),
    Sentence("The service hit a timeout", "timeout", AFFIRMED, "plain"),
    Sentence("It ran without a memory leak", "memory leak", NEGATED, "without"),
    Sentence("It ran with a memory leak", "memory leak", AFFIRMED, "plain"),
    Sentence("We ruled out a full GC pause", "full gc", NEGATED, "ruled out"),
    Sentence("We found a full GC pause", "full gc", AFFIRMED, "plain"),
    Sentence("The pod is no longer hitting the disk quota", "disk quota", NEGATED, "no longer"),
    Sentence("The pod keeps hitting the disk quota", "disk quota", AFFIRMED, "plain"),
    Sentence("The index wasn't used by the slow query", "slow query", NEGATED, "n't"),
    Sentence("The query isn't slow", "slow", NEGATED, "n't"),
    Sentence("The cause was not the connection pool", "connection pool", NEGATED, "not"),
    Sentence("Neither the cache nor the database was saturated", "database", NEGATED, "nor"),
    Sentence("The logs show an absence of timeout errors", "timeout", NEGATED, "absence of"),
    # English look-alikes that must stay affirmed
    Sentence("Not only the payment API but also refunds time out", "payment", AFFIRMED, "pseudo not only"),
    Sentence("There is no doubt the connection pool was exhausted", "connection pool", AFFIRMED, "pseudo no doubt"),
    Sentence("Not just a timeout, a full outage", "timeout", AFFIRMED, "pseudo not just"),
    Sentence("No retries were configured, so the timeout cascaded", "timeout", AFFIRMED, "trigger in an earlier clause"),
    Sentence("The connection pool was exhausted, not the network", "connection pool", AFFIRMED, "trigger after the keyword"),
    Sentence("It was not the network but the connection pool", "connection pool", AFFIRMED, "terminator but"),
    Sentence("Not the network; the connection pool was exhausted", "connection pool", AFFIRMED, "trigger in an earlier clause"),
    Sentence("The service can't get a connection from the connection pool", "connection pool", AFFIRMED, "pseudo can't"),
    Sentence("The service cannot reach the payment gateway", "payment", AFFIRMED, "pseudo cannot"),
    Sentence("Nothing is known about the notes on the timeout", "timeout", AFFIRMED, "no/not inside words"),
    Sentence("Retries happened without backoff, causing the timeout", "timeout", AFFIRMED, "terminator causing"),
    Sentence("We did not expect that a configuration change several weeks earlier had shrunk the connection pool", "connection pool", AFFIRMED, "beyond the window"),  # fmt: skip
    Sentence("Not necessarily the payment gateway", "payment", AFFIRMED, "pseudo not necessarily"),
    # A denial NegEx's forward triggers do not see (the rule reads a trigger before its keyword): a known miss.
    Sentence("The full GC was ruled out", "full gc", NEGATED, "post-trigger, not detected"),
)

# Keywords the corpus also expects in a sentence (their characters are never a trigger).
ALSO_EXPECTED = {"未发现证书问题": ("未发现",)}
