CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price_cents INTEGER NOT NULL);
INSERT INTO products VALUES (1, 'Hamer', 'tools', 1500), (2, 'Saw', 'tools', 2500), (3, 'Lamp', 'home', 4000), (4, 'Rug', 'home', 9000), (5, 'Drill', 'tools', 6000);
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, last_login TEXT, confirmed_at TEXT);
INSERT INTO users VALUES (1, 'ann', '2023-12-31', '2023-01-02'), (2, 'bob', '2024-01-01', NULL), (3, 'cy', '2024-03-15', '2024-03-01'), (4, 'dee', NULL, NULL), (5, 'eve', '2023-06-30', '2023-06-01');
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, order_date TEXT NOT NULL, amount_cents INTEGER NOT NULL);
INSERT INTO orders VALUES (1, 1, '2024-01-31', 5000), (2, 2, '2024-02-01', 12000), (3, 1, '2024-02-14', 3000), (4, 3, '2024-02-29', 20000), (5, 4, '2024-03-01', 1000), (6, 4, '2024-03-05', 1000), (7, 4, '2024-03-09', 1000), (8, 5, '2024-03-31', 7000), (9, 2, '2024-01-15', 500);
