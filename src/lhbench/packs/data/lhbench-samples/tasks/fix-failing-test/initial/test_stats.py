from stats import mean, median

assert mean([1, 2, 3, 4]) == 2.5
assert median([3, 1, 2]) == 2
assert median([4, 1, 3, 2]) == 2.5, "the median of an even count is the mean of the middle two"
print("ok")
