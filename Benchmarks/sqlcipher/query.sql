SELECT count(*), sum(length(body)) FROM t WHERE n < 500;
SELECT count(*) FROM t WHERE body LIKE '%ABCD%';
SELECT sum(n) FROM t WHERE n BETWEEN 10 AND 20;
